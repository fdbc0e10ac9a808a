"""Claude Code as a host of the core (:class:`ctxrelay.hooks.host.Host`): its hook events,
how it reads an answer, and its rule for when a session has started from a handoff file.

Answers as Claude Code 2.1 reads them (``docs/claude-code-facts.md``): a ``PreToolUse``
deny as ``permissionDecision: "deny"`` with its reason; context for the model as
``hookSpecificOutput.additionalContext`` of ``PostToolUse``, ``UserPromptSubmit`` and
``SessionStart``; the prompt that continues an ended turn as the ``Stop`` hook's
``additionalContext`` (exit 0: the model goes on, the person sees "Stop hook says");
a line for the person as ``systemMessage``. Claude Code cannot clear the context from
a hook: in auto mode the mod does (:mod:`ctxrelay.claude.extras.automod`), so ``clear`` is not
said here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxrelay.claude._state import HOST
from ctxrelay.hooks.host import Answer, Event, Handler
from ctxrelay.transcripts import claude_started as started_in
from ctxrelay.transcripts import injection_mark

__all__ = ["CLAUDE", "ClaudeHost", "injection_mark", "started_in"]

_EVENTS = "ctxrelay.claude._events."


class ClaudeHost:
    """Claude Code."""

    name = HOST
    handlers: Mapping[str, Handler] = {
        "PreToolUse": Handler(Event.TOOL_CALL, _EVENTS + "pre_tool_use"),
        "PostToolUse": Handler(Event.TOOL_DONE, _EVENTS + "post_tool_use"),
        "SubagentStop": Handler(Event.SUBAGENT_END, _EVENTS + "subagent_stop"),
        "UserPromptSubmit": Handler(Event.PROMPT, _EVENTS + "user_prompt_submit"),
        "Stop": Handler(Event.TURN_END, _EVENTS + "stop"),
        "SessionStart": Handler(Event.SESSION_START, _EVENTS + "session_start"),
    }

    def encode(self, event: Event, name: str, answer: Answer) -> Mapping[str, Any] | None:
        out: dict[str, Any] = {}
        if event is Event.TOOL_CALL and answer.deny:
            out["hookSpecificOutput"] = {
                "hookEventName": name,
                "permissionDecision": "deny",
                "permissionDecisionReason": answer.deny,
            }
        text = answer.prompt if event is Event.TURN_END else answer.context
        if text and event in (Event.TOOL_DONE, Event.PROMPT, Event.SESSION_START, Event.TURN_END):
            out["hookSpecificOutput"] = {"hookEventName": name, "additionalContext": text}
        if answer.notice:
            out["systemMessage"] = answer.notice
        return out or None

    def started(self, transcript_path: str, handoff: Path, since: int | None = None) -> bool:
        """:func:`started_in`: the transcript holds the injection
        of the file, then an ``api-request`` line."""
        return started_in(transcript_path, handoff)


CLAUDE = ClaudeHost()
"""The one instance the hook and the handoff use."""
