"""``UserPromptSubmit``: the main thread's turn starts (a user prompt, or Claude Code's
``<task-notification>`` when a background subagent ends); it carries the notices of
subagents that stopped short."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxrelay.claude._events._payloads import HookAnswer, UserPromptSubmitPayload

__all__ = ["handle"]

EVENT = "UserPromptSubmit"


def handle(payload: UserPromptSubmitPayload) -> HookAnswer | None:
    from ctxrelay.claude._state import notice_possible

    if payload.get("agent_id"):
        return None  # not the main thread
    if not notice_possible(payload):
        return None
    from ctxrelay.claude._notices import main_thread_notice

    note = main_thread_notice(payload)
    if note is None:
        return None
    return {"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": note}}
