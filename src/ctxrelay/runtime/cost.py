"""The price seam: what one response cost, from its usage.

The loop asks a :class:`Pricer` after every response and stores the answer per response
row, per window and per session. Prices come from the project's one table
(:mod:`ctxrelay.pricing`); a session may carry its own :class:`~ctxrelay.pricing.Prices`
(then every response is priced with them), and a model the table does not know (the
scripted one) costs 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any, Protocol, runtime_checkable

from ctxrelay.pricing import DEFAULT_PRICES, Prices, PriceTable, cost
from ctxrelay.runtime.model import Usage

__all__ = [
    "Pricer",
    "Prices",
    "TablePricer",
    "ZeroPricer",
    "default_pricer",
    "prices_from_json",
    "prices_model",
    "prices_to_json",
]


@runtime_checkable
class Pricer(Protocol):
    """Prices responses. A pricer may also have ``knows(model) -> bool`` (see
    :func:`prices_model`); without it every model counts as priced."""

    def cost_usd(self, model: str, usage: Usage) -> float:
        """USD for one response of ``model`` (``provider:model`` or a bare id)."""
        ...


def prices_model(pricer: Pricer, model: str) -> bool:
    """Whether ``pricer`` has real prices for ``model``: if not, its responses count as
    $0 and a ``max_cost`` cap can never be reached."""
    knows = getattr(pricer, "knows", None)
    return True if knows is None else bool(knows(model))


class ZeroPricer:
    """Every response is free."""

    def cost_usd(self, model: str, usage: Usage) -> float:
        return 0.0

    def knows(self, model: str) -> bool:
        """No model has a price here (so a cost cap can never be reached)."""
        return False


class TablePricer:
    """Prices from a table by model id (the project's table by default); ``default``
    prices any model the table does not know. The scripted model is never looked up
    in the table: a script named like a real model must not cost money."""

    def __init__(self, table: PriceTable | None = None, *, default: Prices | None = None) -> None:
        self._table = DEFAULT_PRICES if table is None else table
        self._default = default

    def cost_usd(self, model: str, usage: Usage) -> float:
        prices = self._prices(model)
        return cost(usage, prices) if prices is not None else 0.0

    def knows(self, model: str) -> bool:
        """Whether ``model`` has prices; an unknown one costs 0 and never reaches a cap."""
        return self._prices(model) is not None

    def _prices(self, model: str) -> Prices | None:
        kind, sep, bare = model.partition(":")
        name = bare if sep else model
        prices = None if kind == "scripted" else self._table.lookup(name)
        return prices or self._default


def default_pricer(prices: Prices | None = None) -> Pricer:
    """The session's own prices if given, else the project's table."""
    if prices is not None:
        return TablePricer(PriceTable({}), default=prices)
    return TablePricer()


def prices_to_json(prices: Prices) -> dict[str, Any]:
    return asdict(prices)


def prices_from_json(raw: Mapping[str, Any]) -> Prices:
    fields = {k: raw[k] for k in raw}
    nested = fields.get("long_prompt")
    if isinstance(nested, Mapping):  # ``asdict`` wrote the long-prompt rates as a dict
        fields["long_prompt"] = prices_from_json(nested)
    return Prices(**fields)
