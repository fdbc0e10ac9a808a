"""The Gemini CLI as a host of the core (:class:`ctxrelay.hooks.host.Host`): its hook
events, how it reads an answer, and its rule for when a session has started from a
handoff file. Answers as the Gemini CLI 0.61.0 reads them (``docs/gemini-facts.md``):

- ``BeforeTool`` deny: ``{"decision": "deny", "reason": R}``; the model gets
  ``Tool execution blocked: R`` as the call's result;
- ``AfterAgent`` continue: ``{"decision": "deny", "reason": PROMPT}`` continues the turn
  with ``PROMPT``; with ``hookSpecificOutput.clearContext`` the CLI first drops the
  model's history, so ``PROMPT`` opens a fresh context (same session, same file);
- context for the model: ``hookSpecificOutput.additionalContext`` (``SessionStart``,
  ``BeforeAgent``, ``AfterTool``);
- a line for the person: ``systemMessage``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxrelay.gemini._state import HOST
from ctxrelay.hooks.host import Answer, Event, Handler
from ctxrelay.transcripts import gemini_started

__all__ = ["GEMINI", "GeminiHost"]

_EVENTS = "ctxrelay.gemini._events."


class GeminiHost:
    """The Gemini CLI."""

    name = HOST
    handlers: Mapping[str, Handler] = {
        "BeforeTool": Handler(Event.TOOL_CALL, _EVENTS + "before_tool"),
        "AfterTool": Handler(Event.TOOL_DONE, _EVENTS + "after_tool"),
        "BeforeAgent": Handler(Event.PROMPT, _EVENTS + "before_agent"),
        "AfterAgent": Handler(Event.TURN_END, _EVENTS + "after_agent"),
    }

    def encode(self, event: Event, name: str, answer: Answer) -> Mapping[str, Any] | None:
        out: dict[str, Any] = {}
        if event is Event.TOOL_CALL and answer.deny:
            out |= {"decision": "deny", "reason": answer.deny}
        elif event is Event.TURN_END and answer.prompt:
            out |= {"decision": "deny", "reason": answer.prompt}
            if answer.clear:
                out["hookSpecificOutput"] = {"hookEventName": name, "clearContext": True}
        elif answer.context and event in (Event.SESSION_START, Event.PROMPT, Event.TOOL_DONE):
            out["hookSpecificOutput"] = {"hookEventName": name, "additionalContext": answer.context}
        if answer.notice:
            out["systemMessage"] = answer.notice
        return out or None

    def started(self, transcript_path: str, handoff: Path, since: int | None = None) -> bool:
        """A session has started from ``handoff`` once its session file holds, in the
        window given the file (after ``since``), a user message naming the file and a
        model response after it (:func:`ctxrelay.transcripts.gemini_started`)."""
        return gemini_started(transcript_path, handoff.name, since=since)


GEMINI = GeminiHost()
"""The one instance the hook and the handoff use."""
