"""``tool.execute.before`` on OpenCode's ``bash`` and ``read``: deny a call that would
pour a big file into the context uncapped, or read again a file already in it
(:mod:`ctxrelay.opencode.guard`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrelay.hooks.host import Answer
from ctxrelay.opencode.guard import deny_reason

if TYPE_CHECKING:
    from ctxrelay.opencode._payloads import ToolBeforePayload

__all__ = ["handle"]


def handle(payload: ToolBeforePayload) -> Answer | None:
    reason = deny_reason(payload)
    return Answer(deny=reason) if reason else None
