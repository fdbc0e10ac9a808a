"""Pricing rule of the analyzer: every response at the prices of the model that made it.

A session's main chain can switch model (``/model``, a fallback), its subagents run
their own models, and the compaction summarizer runs whatever Claude Code gave it, so no
single price per session is right. A :class:`Bill` sums responses per model, each
response priced alone (a long-prompt tier applies request by request). A model the price
table does not know is named in :attr:`Bill.unpriced_models`, and a bill holding one has
no ``cost_usd``: an unknown price is never a zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxrelay.pricing import Prices, PriceTable, cost
from ctxrelay.transcripts import Usage

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable
    from typing import Any

__all__ = ["NO_MODEL", "Bill", "ModelLine", "Pricer", "usage_json"]

NO_MODEL = "(no model)"
"""How a response whose line names no model is reported (it cannot be priced)."""


def usage_json(usage: Usage) -> dict[str, int]:
    """The four categories plus the 1-hour share of the cache writes, so the tokens of a
    ``total`` block can be priced again from the JSON alone."""
    return {
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_creation_1h_input_tokens": usage.cache_creation_1h_tokens,
    }


def total_usage(usages: Iterable[Usage]) -> Usage:
    """The sum of ``usages``, built once (adding :class:`Usage` values one by one builds
    a frozen value per step, a cost the replays paid at every request)."""
    fresh = written = read = output = one_hour = 0
    for u in usages:
        fresh += u.input_tokens
        written += u.cache_creation_input_tokens
        read += u.cache_read_input_tokens
        output += u.output_tokens
        one_hour += u.cache_creation_1h_tokens
    return Usage(fresh, written, read, output, one_hour)


class Pricer:
    """A price table with its lookups remembered (one per model id per run)."""

    __slots__ = ("_cache", "table")

    def __init__(self, table: PriceTable) -> None:
        self.table = table
        self._cache: dict[str | None, Prices | None] = {}

    def prices(self, model: str | None) -> Prices | None:
        try:
            return self._cache[model]
        except KeyError:
            found = self._cache[model] = self.table.lookup(model)
            return found

    def cost(self, usage: Usage, model: str | None) -> float | None:
        """USD of one request at ``model``'s prices; ``None`` when it has none."""
        prices = self.prices(model)
        return None if prices is None else cost(usage, prices)

    def total(self, items: Iterable[tuple[str | None, Usage]]) -> float | None:
        """USD of many requests, each at its model's prices; ``None`` when one model has
        none. Prices are linear in the tokens except a long-prompt tier, which applies
        request by request, so the tokens of each model are summed and priced once, and
        requests of a model with such a tier are priced one by one."""
        sums: dict[str | None, list[int]] = {}
        total = 0.0
        for model, u in items:
            prices = self.prices(model)
            if prices is None:
                return None
            if prices.long_prompt is not None:
                total += cost(u, prices)
                continue
            acc = sums.get(model)
            if acc is None:
                acc = sums[model] = [0, 0, 0, 0, 0]
            acc[0] += u.input_tokens
            acc[1] += u.cache_creation_input_tokens
            acc[2] += u.cache_read_input_tokens
            acc[3] += u.output_tokens
            acc[4] += u.cache_creation_1h_tokens
        for model, acc in sums.items():
            prices = self.prices(model)
            assert prices is not None
            total += cost(Usage(*acc), prices)
        return total

    def total_of(
        self,
        models: Iterable[str | None],
        summed: Usage,
        items: Iterable[tuple[str | None, Usage]],
    ) -> float | None:
        """:meth:`total` of requests made by ``models`` whose tokens sum to ``summed``,
        for a caller that has the sum already: requests of one model without a
        long-prompt tier are priced once from the sum, as :meth:`total` prices them;
        any other mix is :meth:`total` of ``items``, the requests one by one (a lazy
        iterable is read only then)."""
        distinct = set(models)
        if len(distinct) == 1:
            prices = self.prices(distinct.pop())
            if prices is None:
                return None
            if prices.long_prompt is None:
                return cost(summed, prices)
        return self.total(items)


@dataclass(frozen=True, slots=True)
class ModelLine:
    """The responses of one model in a bill."""

    model: str
    requests: int
    usage: Usage
    cost_usd: float | None

    def as_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "requests": self.requests,
            "usage": usage_json(self.usage),
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
        }


def _merge(a: ModelLine, b: ModelLine) -> ModelLine:
    both = None if a.cost_usd is None or b.cost_usd is None else a.cost_usd + b.cost_usd
    return ModelLine(a.model, a.requests + b.requests, a.usage + b.usage, both)


@dataclass(frozen=True, slots=True)
class Bill:
    """Responses summed per model, each priced at its own model's prices."""

    lines: tuple[ModelLine, ...] = ()

    @classmethod
    def of(cls, items: Iterable[tuple[str | None, Usage]], pricer: Pricer) -> Bill:
        """The bill of ``(model, usage)`` pairs, one pair per response."""
        groups: dict[str | None, list[Usage]] = {}
        for model, usage in items:
            group = groups.get(model)
            if group is None:
                groups[model] = [usage]
            else:
                group.append(usage)
        lines: dict[str, ModelLine] = {}
        for model, usages in groups.items():
            summed = total_usage(usages)
            price = pricer.total_of((model,), summed, ((model, u) for u in usages))
            line = ModelLine(model or NO_MODEL, len(usages), summed, price)
            mine = lines.get(line.model)  # a model named "(no model)" and none at all
            lines[line.model] = line if mine is None else _merge(mine, line)
        return cls(tuple(lines.values()))

    @classmethod
    def of_sum(
        cls,
        models: Collection[str | None],
        requests: int,
        summed: Usage,
        items: Iterable[tuple[str | None, Usage]],
        pricer: Pricer,
    ) -> Bill:
        """:meth:`of` ``items`` (``requests`` pairs made by ``models``), for a caller that
        has their sum already: one model's bill is its one line; any other mix is
        :meth:`of` ``items`` (a lazy iterable is read only then)."""
        if len(models) != 1:
            return cls.of(items, pricer)
        (model,) = models
        line = ModelLine(
            model or NO_MODEL, requests, summed, pricer.total_of(models, summed, items)
        )
        return cls((line,))

    def __add__(self, other: Bill) -> Bill:
        acc: dict[str, ModelLine] = {line.model: line for line in self.lines}
        for line in other.lines:
            mine = acc.get(line.model)
            acc[line.model] = line if mine is None else _merge(mine, line)
        return Bill(tuple(acc.values()))

    @property
    def requests(self) -> int:
        return sum(line.requests for line in self.lines)

    @property
    def usage(self) -> Usage:
        return total_usage(line.usage for line in self.lines)

    @property
    def unpriced_models(self) -> tuple[str, ...]:
        return tuple(sorted(line.model for line in self.lines if line.cost_usd is None))

    @property
    def cost_usd(self) -> float | None:
        """The sum over every model; ``None`` when any model of the bill has no price."""
        total = 0.0
        for line in self.lines:
            if line.cost_usd is None:
                return None
            total += line.cost_usd
        return total

    def as_json(self) -> dict[str, Any]:
        cost_usd = self.cost_usd
        return {
            "requests": self.requests,
            "usage": usage_json(self.usage),
            "cost_usd": None if cost_usd is None else round(cost_usd, 6),
            "by_model": [line.as_json() for line in sorted(self.lines, key=lambda x: -x.requests)],
        }
