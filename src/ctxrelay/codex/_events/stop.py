"""Stop (end of a main-session turn on Codex): settles this session's handoff
bookkeeping (a handoff injected into it is consumed once its first response is in the
rollout; the file it was asked for is recorded as its own), then at the slider blocks
once with the request for a handoff file; Codex continues the same turn with it
(:func:`ctxrelay.codex.handoff.after_turn`, :func:`~ctxrelay.codex.handoff.handoff_request`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrelay.codex.handoff import after_turn, handoff_request
from ctxrelay.hooks.host import Answer

if TYPE_CHECKING:
    from ctxrelay.codex._payloads import StopPayload

__all__ = ["handle"]


def handle(payload: StopPayload) -> Answer | None:
    after_turn(payload)
    reason = handoff_request(payload)
    return None if reason is None else Answer(prompt=reason)
