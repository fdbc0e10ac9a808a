"""The model registry: context window, largest output and default output reserve of the
current Anthropic and OpenAI models, with prices from :mod:`ctxrelay.pricing` (the one
price table of the project; none is kept here).

Windows of the Claude models are the ones the Claude Code CLI (2.1.332) uses for them;
the OpenAI ones are OpenAI's published limits. Flags override everything
(``--limit``, ``--reserve``); a model the registry does not know needs ``--limit``.
Lookup ignores a provider prefix, letter case, a date suffix (``-20250929``,
``-2025-08-07``) and a Bedrock/Vertex version suffix (``-v1:0``, ``@20250929``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from ctxrelay.budget import Budget, BudgetValueError
from ctxrelay.errors import UnknownModelError

if TYPE_CHECKING:
    from ctxrelay.pricing import Prices

__all__ = [
    "DEFAULT_RESERVE_CAP",
    "MODELS",
    "ModelInfo",
    "canonical_model",
    "default_reserve",
    "lookup_model",
    "resolve_model",
]

DEFAULT_RESERVE_CAP: Final = 32_000
"""The default output reserve is the model's largest output, capped here: a coding
agent's replies are tool calls and short text; a bigger reserve only hands off sooner."""


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What the runtime needs to budget a model. ``known`` is False when the window came
    from ``--limit`` for a model the registry does not list."""

    provider: str
    model: str
    context_window: int
    max_output_tokens: int
    output_reserve: int
    known: bool = True

    @property
    def spec(self) -> str:
        return f"{self.provider}:{self.model}"

    @property
    def prices(self) -> Prices | None:
        """List prices from the project's table (``None``: the table does not know it)."""
        from ctxrelay.pricing import DEFAULT_PRICES

        return DEFAULT_PRICES.lookup(self.model)


def default_reserve(max_output_tokens: int, context_window: int) -> int:
    """The largest output, capped at :data:`DEFAULT_RESERVE_CAP` and at a quarter of the
    window (a small local model must keep most of its window for context)."""
    return max(1, min(max_output_tokens, DEFAULT_RESERVE_CAP, context_window // 4))


# provider -> canonical model id -> (context window, largest output in tokens)
MODELS: Final[dict[str, dict[str, tuple[int, int]]]] = {
    "anthropic": {
        "claude-opus-5-5": (1_000_000, 128_000),
        "claude-opus-5": (1_000_000, 64_000),
        "claude-opus-4-8": (1_000_000, 64_000),
        "claude-opus-4-7": (1_000_000, 64_000),
        "claude-opus-4-6": (200_000, 64_000),
        "claude-opus-4-5": (200_000, 64_000),
        "claude-opus-4-1": (200_000, 32_000),
        "claude-opus-4-0": (200_000, 32_000),
        "claude-sonnet-5-5": (1_000_000, 128_000),
        "claude-sonnet-5": (1_000_000, 64_000),
        "claude-sonnet-4-6": (200_000, 64_000),
        "claude-sonnet-4-5": (200_000, 64_000),
        "claude-sonnet-4-0": (200_000, 64_000),
        "claude-3-7-sonnet": (200_000, 64_000),
        "claude-haiku-5-5": (1_000_000, 128_000),
        "claude-haiku-4-5": (200_000, 64_000),
        "claude-3-5-haiku": (200_000, 8_192),
        "claude-fable-5-2": (1_000_000, 128_000),
        "claude-fable-5-1": (1_000_000, 64_000),
        "claude-fable-5": (1_000_000, 64_000),
        "claude-mythos-5-2": (1_000_000, 128_000),
        "claude-mythos-5-1": (1_000_000, 64_000),
        "claude-mythos-5": (1_000_000, 64_000),
    },
    "openai": {
        "gpt-5.1": (400_000, 128_000),
        "gpt-5": (400_000, 128_000),
        "gpt-5-mini": (400_000, 128_000),
        "gpt-5-nano": (400_000, 128_000),
        "gpt-4.1": (1_047_576, 32_768),
        "gpt-4.1-mini": (1_047_576, 32_768),
        "gpt-4.1-nano": (1_047_576, 32_768),
        "gpt-4o": (128_000, 16_384),
        "gpt-4o-mini": (128_000, 16_384),
        "o4-mini": (200_000, 100_000),
        "o3": (200_000, 100_000),
        "o3-mini": (200_000, 100_000),
        "o1": (200_000, 100_000),
    },
}

# Ids whose dated form drops the minor version: ``claude-opus-4-20250514`` is Opus 4.0.
_ALIASES: Final = {
    "claude-opus-4": "claude-opus-4-0",
    "claude-sonnet-4": "claude-sonnet-4-0",
}
_SUFFIXES = re.compile(r"(@\d{8}|-v\d+(:\d+)?|-\d{8}|-\d{4}-\d{2}-\d{2}|-latest)+$")


def canonical_model(model: str) -> str:
    """The registry key of ``model``: ``us.anthropic.claude-sonnet-4-5-20250929-v1:0`` →
    ``claude-sonnet-4-5``, ``openai/gpt-4o-2024-08-06`` → ``gpt-4o``."""
    from ctxrelay.pricing import normalize_model

    name = _SUFFIXES.sub("", normalize_model(model))
    return _ALIASES.get(name, name)


def lookup_model(provider: str, model: str) -> ModelInfo | None:
    """The registry's entry for ``model`` of ``provider``, or ``None``."""
    table = MODELS.get(provider)
    if table is None:
        return None
    found = table.get(canonical_model(model))
    if found is None:
        return None
    window, max_output = found
    return ModelInfo(
        provider=provider,
        model=model,
        context_window=window,
        max_output_tokens=max_output,
        output_reserve=default_reserve(max_output, window),
    )


def resolve_model(
    provider: str, model: str, *, limit: int | None = None, reserve: int | None = None
) -> ModelInfo:
    """The model's budget inputs with the flags laid over the registry.

    Raises :class:`UnknownModelError` (asking for ``--limit``) when the registry does not
    know the model and no limit is given, and the policy core's ``BudgetValueError`` for a
    window or reserve it rejects."""
    info = lookup_model(provider, model)
    if info is None:
        if limit is None:
            raise UnknownModelError(
                f"ctxrelay does not know the context window of {provider}:{model}; pass "
                "--limit TOKENS with the window your server gives it (and --reserve for its "
                "output)"
            )
        info = ModelInfo(
            provider=provider,
            model=model,
            context_window=limit,
            max_output_tokens=limit,
            output_reserve=default_reserve(DEFAULT_RESERVE_CAP, limit),
            known=False,
        )
    window = limit if limit is not None else info.context_window
    # The policy core owns the rules for these values (and the CLI words its errors by
    # flag): check them there, never a second copy here.
    if reserve is None:
        reserve = min(info.output_reserve, default_reserve(info.max_output_tokens, window))
    Budget(limit=window, output_reserve=reserve)  # raises BudgetValueError, limit first
    if reserve == 0:  # the run's own rule: the reserve is the room for the model's answer
        raise BudgetValueError("output_reserve", reserve, "more than 0 for a model to answer")
    return ModelInfo(
        provider=provider,
        model=model,
        context_window=window,
        max_output_tokens=info.max_output_tokens,
        output_reserve=reserve,
        known=info.known,
    )
