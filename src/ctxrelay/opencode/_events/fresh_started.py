"""``fresh.started`` (the plugin's own): the fresh session of a handoff, before its
first prompt goes out: what it was given and which process runs it
(:func:`ctxrelay.opencode.handoff.fresh_started`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrelay.hooks.host import Answer
from ctxrelay.opencode.handoff import fresh_started

if TYPE_CHECKING:
    from ctxrelay.opencode._payloads import FreshStartedPayload

__all__ = ["handle"]


def handle(payload: FreshStartedPayload) -> Answer | None:
    return fresh_started(payload)
