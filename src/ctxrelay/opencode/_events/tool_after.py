"""``tool.execute.after`` on OpenCode's ``bash`` and ``read``: the call ran and its
result reached the model, so each file it read whole is recorded for the re-read rule
(:func:`ctxrelay.opencode.guard.record_read`); then the handoff's step
(:func:`ctxrelay.opencode.handoff.tool_after`): the ask at the slider, inside the turn,
or the fresh session once the handoff file asked for is written."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrelay.hooks.host import Answer
from ctxrelay.opencode.guard import record_read
from ctxrelay.opencode.handoff import tool_after

if TYPE_CHECKING:
    from ctxrelay.opencode._payloads import ToolAfterPayload

__all__ = ["handle"]


def handle(payload: ToolAfterPayload) -> Answer | None:
    record_read(payload)
    return tool_after(payload)
