"""PostToolUse on Codex's shell: the command ran and its output reached the agent, so
each file it printed whole is recorded for the re-read rule; and, past the slider, the
handoff ask goes to the model as context inside the turn. ``Stop`` fires only when the
model ends its turn, so a long autonomous turn would otherwise pass the slider, and
Codex's own compaction, unasked; Codex 0.171 gives a ``PostToolUse`` ``additionalContext``
to the model as a developer message before the command's output."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrelay.codex._events.pre_tool_use import command_of
from ctxrelay.codex.guard import record_printed
from ctxrelay.codex.handoff import handoff_request
from ctxrelay.hooks.host import Answer

if TYPE_CHECKING:
    from ctxrelay.codex._payloads import PostToolUsePayload

__all__ = ["handle"]


def handle(payload: PostToolUsePayload) -> Answer | None:
    call = command_of(payload)
    if call is not None:
        record_printed(call[0], call[1], payload)
    ask = handoff_request(payload, mid_turn=True)
    return None if ask is None else Answer(context=ask)
