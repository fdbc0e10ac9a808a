"""``chat.message``: a user message starts a turn: the person's ``handoff``, a new
session's first prompt (offered the newest unused handoff), or the manual note
(:func:`ctxrelay.opencode.handoff.chat_message`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrelay.hooks.host import Answer
from ctxrelay.opencode.handoff import chat_message

if TYPE_CHECKING:
    from ctxrelay.opencode._payloads import ChatMessagePayload

__all__ = ["handle"]


def handle(payload: ChatMessagePayload) -> Answer | None:
    return chat_message(payload)
