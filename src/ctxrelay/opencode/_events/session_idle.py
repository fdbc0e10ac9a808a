"""``session.idle``: a turn ended: settle the handoffs, hand off from a file written
without the write tool, or ask or tell at the slider
(:func:`ctxrelay.opencode.handoff.session_idle`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrelay.hooks.host import Answer
from ctxrelay.opencode.handoff import session_idle

if TYPE_CHECKING:
    from ctxrelay.opencode._payloads import SessionIdlePayload

__all__ = ["handle"]


def handle(payload: SessionIdlePayload) -> Answer | None:
    return session_idle(payload)
