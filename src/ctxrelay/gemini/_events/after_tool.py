"""AfterTool on the Gemini CLI's shell and ``read_file``: the call ran and its output
reached the agent, so each file it read whole is recorded for the re-read rule."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrelay.gemini.guard import record_read
from ctxrelay.hooks.host import Answer

if TYPE_CHECKING:
    from ctxrelay.gemini._payloads import AfterToolPayload

__all__ = ["handle"]


def handle(payload: AfterToolPayload) -> Answer | None:
    record_read(payload)
    return None
