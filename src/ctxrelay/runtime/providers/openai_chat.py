"""``openai-chat:MODEL``: the Chat Completions provider (``ctxrelay.runtime.providers.openai``),
chosen explicitly for OpenAI-compatible servers that do not speak the Responses API
(``openai:MODEL``). It names itself ``openai-chat:``, so a session it started resumes on
Chat Completions."""

from __future__ import annotations

from typing import Any

from ctxrelay.runtime.providers.openai import OpenAIProvider, model_defaults

__all__ = ["OpenAIChatProvider", "create", "model_defaults"]


class OpenAIChatProvider(OpenAIProvider):
    """``openai-chat:MODEL``: :class:`OpenAIProvider` under its explicit name."""

    @property
    def name(self) -> str:
        return f"openai-chat:{self.model}"


def create(model: str, **options: Any) -> OpenAIChatProvider:
    """The provider for ``openai-chat:MODEL``; ``options`` as for ``openai:``."""
    return OpenAIChatProvider(model, **options)
