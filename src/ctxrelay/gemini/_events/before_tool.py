"""BeforeTool on the Gemini CLI's shell and ``read_file``: deny a call that would pour a
big file into the context, or read again a file already in it
(:mod:`ctxrelay.gemini.guard`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrelay.gemini.guard import deny_reason
from ctxrelay.hooks.host import Answer

if TYPE_CHECKING:
    from ctxrelay.gemini._payloads import BeforeToolPayload

__all__ = ["handle"]


def handle(payload: BeforeToolPayload) -> Answer | None:
    reason = deny_reason(payload)
    return Answer(deny=reason) if reason else None
