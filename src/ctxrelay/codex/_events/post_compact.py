"""PostCompact: the compaction dropped what was printed, so the re-read record of the
session goes."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxrelay.codex._payloads import CodexAnswer, PostCompactPayload

__all__ = ["handle"]


def handle(payload: PostCompactPayload) -> CodexAnswer | None:
    from ctxrelay.codex.guard import forget_reads

    forget_reads(payload)
    return None
