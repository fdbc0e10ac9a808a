"""``UserPromptSubmit``: the main thread's turn starts (a user prompt, or Claude Code's
``<task-notification>`` when a background subagent ends); it carries the notices of
subagents that stopped short."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrelay.claude._notices import main_thread_notice
from ctxrelay.claude._state import notice_possible
from ctxrelay.hooks.host import Answer

if TYPE_CHECKING:
    from ctxrelay.claude._events._payloads import UserPromptSubmitPayload

__all__ = ["handle"]


def handle(payload: UserPromptSubmitPayload) -> Answer | None:
    if payload.get("agent_id") or not notice_possible(payload):
        return None  # not the main thread, or nothing queued for it
    note = main_thread_notice(payload)
    return None if note is None else Answer(context=note)
