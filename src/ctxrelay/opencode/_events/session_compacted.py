"""``session.compacted``: OpenCode summarized the session's history, so what it read is
gone from the context and its re-read records go (:func:`ctxrelay.opencode._state.forget_reads`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrelay.hooks.host import Answer
from ctxrelay.opencode._state import forget_reads

if TYPE_CHECKING:
    from ctxrelay.opencode._payloads import SessionCompactedPayload

__all__ = ["handle"]


def handle(payload: SessionCompactedPayload) -> Answer | None:
    session = payload.get("session_id")
    if isinstance(session, str):
        forget_reads(session)
    return None
