"""AfterAgent (end of a main-session turn on the Gemini CLI): the handoff's bookkeeping,
then at the slider the ask, the notice, or the clear that continues from the file
(:func:`ctxrelay.gemini.handoff.after_agent`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrelay.gemini.handoff import after_agent
from ctxrelay.hooks.host import Answer

if TYPE_CHECKING:
    from ctxrelay.gemini._payloads import AfterAgentPayload

__all__ = ["handle"]


def handle(payload: AfterAgentPayload) -> Answer | None:
    return after_agent(payload)
