"""PostCompact: the compaction dropped what was printed, so the re-read record of the
session goes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrelay.codex.guard import forget_reads
from ctxrelay.hooks.host import Answer

if TYPE_CHECKING:
    from ctxrelay.codex._payloads import PostCompactPayload

__all__ = ["handle"]


def handle(payload: PostCompactPayload) -> Answer | None:
    forget_reads(payload)
    return None
