"""PostToolUse on Codex's shell: the command ran and its output reached the agent, so
each file it printed whole is recorded for the re-read rule."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrelay.codex._events.pre_tool_use import command_of
from ctxrelay.codex.guard import record_printed
from ctxrelay.hooks.host import Answer

if TYPE_CHECKING:
    from ctxrelay.codex._payloads import PostToolUsePayload

__all__ = ["handle"]


def handle(payload: PostToolUsePayload) -> Answer | None:
    call = command_of(payload)
    if call is not None:
        record_printed(call[0], call[1], payload)
    return None
