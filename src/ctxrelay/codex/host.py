"""The Codex CLI as a host of the core (:class:`ctxrelay.hooks.host.Host`): its hook
events, how it reads an answer, and its rule for when a thread has started from a
handoff file. Answers as Codex 0.171 reads them (``docs/codex-facts.md``, "Answers"): a
``PreToolUse`` deny in ``hookSpecificOutput``; ``SessionStart`` context as
``additionalContext``; a ``Stop`` that continues the same turn as ``decision: "block"``
with the prompt as its ``reason``. Codex shows no line to the person from a hook, so an
answer's ``notice`` is not said.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxrelay.codex._state import HOST
from ctxrelay.hooks.host import Answer, Event, Handler
from ctxrelay.transcripts import codex_started

__all__ = ["CODEX", "CodexHost"]

_EVENTS = "ctxrelay.codex._events."


class CodexHost:
    """The Codex CLI."""

    name = HOST
    handlers: Mapping[str, Handler] = {
        "PreToolUse": Handler(Event.TOOL_CALL, _EVENTS + "pre_tool_use"),
        "PostToolUse": Handler(Event.TOOL_DONE, _EVENTS + "post_tool_use"),
        "PostCompact": Handler(Event.COMPACTED, _EVENTS + "post_compact"),
        "Stop": Handler(Event.TURN_END, _EVENTS + "stop"),
        "SessionStart": Handler(Event.SESSION_START, _EVENTS + "session_start"),
    }

    def encode(self, event: Event, name: str, answer: Answer) -> Mapping[str, Any] | None:
        if event is Event.TOOL_CALL and answer.deny:
            return {
                "hookSpecificOutput": {
                    "hookEventName": name,
                    "permissionDecision": "deny",
                    "permissionDecisionReason": answer.deny,
                }
            }
        if event is Event.TURN_END and answer.prompt:
            return {"decision": "block", "reason": answer.prompt}
        if answer.context and event in (Event.SESSION_START, Event.TOOL_DONE, Event.PROMPT):
            return {
                "hookSpecificOutput": {"hookEventName": name, "additionalContext": answer.context}
            }
        return None

    def started(self, transcript_path: str, handoff: Path, since: int | None = None) -> bool:
        """A thread has started once its rollout holds a response (or a compaction), as
        :func:`ctxrelay.transcripts.codex_context` reads it; a missing rollout, or one
        with no response yet (killed before it), has not. The thread was injected with
        ``handoff`` at its start, so its first response answered it."""
        return codex_started(transcript_path, handoff)


CODEX = CodexHost()
"""The one instance the hook and the handoff use."""
