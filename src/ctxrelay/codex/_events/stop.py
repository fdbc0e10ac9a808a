"""Stop (end of a main-session turn on Codex): at the slider, block once with the
request for a handoff file; Codex continues the same turn with it
(:func:`ctxrelay.codex.handoff.handoff_request`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxrelay.claude._events._payloads import HookAnswer, StopPayload

__all__ = ["handle"]


def handle(payload: StopPayload) -> HookAnswer | None:
    from ctxrelay.codex.handoff import handoff_request

    reason = handoff_request(payload)
    return None if reason is None else {"decision": "block", "reason": reason}
