"""The model registry of the runtime: context window, largest output and default output
reserve of a model, read from the project's one model table
(:mod:`ctxrelay.budget.models`), with prices from :mod:`ctxrelay.pricing`. No model fact
is kept here.

Flags override everything (``--limit``, ``--reserve``); a model the table does not know
needs ``--limit``. Lookup ignores a provider prefix, letter case, a date suffix
(``-20250929``, ``-2025-08-07``) and a Bedrock/Vertex version suffix (``-v1:0``,
``@20250929``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxrelay.budget import Budget, BudgetValueError
from ctxrelay.budget.bounds import DEFAULT_RESERVE_CAP
from ctxrelay.budget.models import canonical_model, default_reserve, model_facts
from ctxrelay.errors import UnknownModelError
from ctxrelay.pricing import DEFAULT_PRICES, Prices

__all__ = [
    "DEFAULT_RESERVE_CAP",
    "ModelInfo",
    "canonical_model",
    "default_reserve",
    "lookup_model",
    "resolve_model",
]


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What the runtime needs to budget a model. ``known`` is False when the window came
    from ``--limit`` for a model the table does not list."""

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
        """List prices from the project's table (``None``: the table does not know it),
        under the model table's price key when the model is in it."""
        found = model_facts(self.model, _VENDOR.get(self.provider, self.provider))
        return DEFAULT_PRICES.lookup(self.model if found is None else found.price_key)


# A provider name that reaches a vendor's models another way: its rows are the vendor's.
_VENDOR = {"openai-chat": "openai"}


def lookup_model(provider: str, model: str) -> ModelInfo | None:
    """The table's entry for ``model`` of ``provider``, or ``None``."""
    found = model_facts(model, _VENDOR.get(provider, provider))
    if found is None:
        return None
    return ModelInfo(
        provider=provider,
        model=model,
        context_window=found.context_window,
        max_output_tokens=found.max_output_tokens,
        output_reserve=found.output_reserve,
    )


def resolve_model(
    provider: str, model: str, *, limit: int | None = None, reserve: int | None = None
) -> ModelInfo:
    """The model's budget inputs with the flags laid over the registry.

    Raises :class:`UnknownModelError` (asking for ``--limit``) when the table does not
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
