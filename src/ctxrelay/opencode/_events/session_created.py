"""``session.created``: a subagent's session is marked, so it never hands off
(:func:`ctxrelay.opencode.handoff.session_created`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrelay.hooks.host import Answer
from ctxrelay.opencode.handoff import session_created

if TYPE_CHECKING:
    from ctxrelay.opencode._payloads import SessionCreatedPayload

__all__ = ["handle"]


def handle(payload: SessionCreatedPayload) -> Answer | None:
    return session_created(payload)
