"""OpenCode as a host of the core (:class:`ctxrelay.hooks.host.Host`): the events its
plugin forwards, how the plugin reads an answer, and the rule for when a session has
started from a handoff file. OpenCode 1.18.33 (``docs/opencode-facts.md``) has no shell
hooks; ctxrelay's plugin (``plugin/ctxrelay.ts``) runs one command per event it forwards
and executes one answer shape (:class:`ctxrelay.opencode._payloads.OpenCodeAnswer`):

- ``deny`` (``tool.execute.before`` only): the plugin throws it, the tool does not run
  and the model gets the text as the call's result;
- ``context``: a note to the model, added to the tool's result or the user message;
- ``notice``: a line to the person (a toast in the UI, stderr in ``opencode run``);
- ``prompt``: sent into the session, or with ``fresh`` (``Answer.clear``) into a new
  session the UI is moved to: OpenCode cannot clear a session's context, a new session
  is its fresh context.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxrelay import transcripts
from ctxrelay.hooks.host import Answer, Event, Handler
from ctxrelay.opencode._state import HOST

__all__ = ["OPENCODE", "OpenCodeHost"]

_EVENTS = "ctxrelay.opencode._events."


class OpenCodeHost:
    """OpenCode, through ctxrelay's plugin."""

    name = HOST
    handlers: Mapping[str, Handler] = {
        "tool.execute.before": Handler(Event.TOOL_CALL, _EVENTS + "tool_before"),
        "tool.execute.after": Handler(Event.TOOL_DONE, _EVENTS + "tool_after"),
        "session.compacted": Handler(Event.COMPACTED, _EVENTS + "session_compacted"),
        "chat.message": Handler(Event.PROMPT, _EVENTS + "chat_message"),
        "session.idle": Handler(Event.TURN_END, _EVENTS + "session_idle"),
        "session.created": Handler(Event.SESSION_START, _EVENTS + "session_created"),
        "fresh.started": Handler(Event.SESSION_START, _EVENTS + "fresh_started"),
    }
    """The events the plugin forwards (install writes their names into it)."""

    def encode(self, event: Event, name: str, answer: Answer) -> Mapping[str, Any] | None:
        out: dict[str, Any] = {}
        if answer.deny and event is Event.TOOL_CALL:
            out["deny"] = answer.deny
        if answer.context:
            out["context"] = answer.context
        if answer.prompt and event is not Event.TOOL_CALL:
            out["prompt"] = answer.prompt
            if answer.clear:
                out["fresh"] = True
        if answer.notice:
            out["notice"] = answer.notice
        return out or None

    def started(self, transcript_path: str, handoff: Path, since: int | None = None) -> bool:
        """A session has started from ``handoff`` once OpenCode's database holds, after
        its user message naming the file, a finished model response
        (:func:`ctxrelay.transcripts.opencode_started`; ``transcript_path`` is
        ``<database>#<session id>``)."""
        # read at the call: the lazy name keeps sqlite3 out of every other hook process
        return transcripts.opencode_started(transcript_path, handoff)


OPENCODE = OpenCodeHost()
"""The one instance the hook and the handlers use."""
