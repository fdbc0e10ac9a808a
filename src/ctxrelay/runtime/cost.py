"""The price seam: what one response cost, from its usage.

The loop asks a :class:`Pricer` after every response and stores the answer per response
row, per window and per session. A session may carry its own prices (``Prices``, USD
per million tokens); otherwise the project's pricing table is used when it knows the
model, and a model it does not know (the scripted one) costs 0.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

from ctxrelay.runtime.model import Usage

__all__ = ["Pricer", "Prices", "TablePricer", "ZeroPricer", "default_pricer"]


@dataclass(frozen=True, slots=True)
class Prices:
    """USD per million tokens; cache writes and reads priced on their own."""

    input: float
    output: float
    cache_write: float = 0.0
    cache_read: float = 0.0

    def cost(self, usage: Usage) -> float:
        total = (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_creation_input_tokens * self.cache_write
            + usage.cache_read_input_tokens * self.cache_read
        )
        return total / 1_000_000

    def to_json(self) -> dict[str, float]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Prices:
        return cls(
            float(raw["input"]),
            float(raw["output"]),
            float(raw.get("cache_write", 0.0)),
            float(raw.get("cache_read", 0.0)),
        )


@runtime_checkable
class Pricer(Protocol):
    def cost_usd(self, model: str, usage: Usage) -> float:
        """USD for one response of ``model`` (``provider:model`` or a bare id)."""
        ...


class ZeroPricer:
    """Every response is free (the scripted model)."""

    def cost_usd(self, model: str, usage: Usage) -> float:
        return 0.0


class TablePricer:
    """Prices from a table by model id; ``default`` for any model not in it."""

    def __init__(
        self, table: Mapping[str, Prices] | None = None, *, default: Prices | None = None
    ) -> None:
        self._table = dict(table or {})
        self._default = default

    def cost_usd(self, model: str, usage: Usage) -> float:
        bare = model.partition(":")[2] or model
        prices = self._table.get(model) or self._table.get(bare) or self._default
        return prices.cost(usage) if prices is not None else 0.0


class _ProjectPricer:
    """Adapter over ``ctxrelay.pricing`` (the analyzer's table), looked up lazily."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def cost_usd(self, model: str, usage: Usage) -> float:
        kind, _, bare = model.partition(":")
        if kind == "scripted" or not bare:
            return 0.0
        lookup = getattr(self._module, "cost_usd", None)
        if lookup is None:
            return 0.0
        try:
            value = lookup(
                bare,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_creation_input_tokens=usage.cache_creation_input_tokens,
                cache_read_input_tokens=usage.cache_read_input_tokens,
            )
        except (KeyError, LookupError):
            return 0.0
        return float(value) if value is not None else 0.0


def default_pricer(prices: Prices | None = None) -> Pricer:
    """The session's own prices if given, else the project's table, else free."""
    if prices is not None:
        return TablePricer(default=prices)
    try:
        module = importlib.import_module("ctxrelay.pricing")
    except ModuleNotFoundError:
        return ZeroPricer()
    return _ProjectPricer(module)
