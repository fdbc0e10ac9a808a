"""BeforeAgent (a prompt starts a turn on the Gemini CLI): a fresh session's first
prompt is offered the project's newest unused handoff, the person's ``handoff`` asks for
the file now, and the manual mode's note reaches the model
(:func:`ctxrelay.gemini.handoff.before_agent`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrelay.gemini.handoff import before_agent
from ctxrelay.hooks.host import Answer

if TYPE_CHECKING:
    from ctxrelay.gemini._payloads import BeforeAgentPayload

__all__ = ["handle"]


def handle(payload: BeforeAgentPayload) -> Answer | None:
    return before_agent(payload)
