"""The one pricing table of ctxrelay: USD per million tokens, per model family.

Every place that prices tokens (the runtime's accounting, the providers, ``ctxrelay
analyze``) imports this module; none keeps its own copy of a price. Prices are the
vendors' published list prices for the standard tier; a user with other prices (a
discount, a batch tier, a model this table does not know) passes a JSON or TOML file
to :func:`load_prices`, whose entries are laid over the defaults.

Usage is priced in Anthropic's categories: uncached ``input_tokens``, cache writes
(5-minute and 1-hour time to live), cache reads and output. OpenAI reports cached input
inside its prompt tokens and charges nothing extra for writes; :func:`openai_usage`
converts its usage into these categories.

Stdlib and the model table's id rules (:mod:`ctxrelay.budget.models`); ``tomllib`` is
imported only to read a ``.toml`` file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ctxrelay.budget.models import FAMILIES, normalize_model
from ctxrelay.errors import ConfigError

__all__ = [
    "DEFAULT_PRICES",
    "PriceTable",
    "Prices",
    "UsageLike",
    "cost",
    "load_prices",
    "normalize_model",
    "openai_usage",
]

_PER = 1_000_000
_INFINITY = float("inf")


@dataclass(frozen=True, slots=True)
class Prices:
    """USD per million tokens of one model family."""

    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float
    family: str = ""
    long_prompt_above: int | None = None
    """A request whose prompt (uncached input + cache writes + cache reads) is larger than
    this many tokens costs ``long_prompt``'s rates in every category, output included."""
    long_prompt: Prices | None = None

    def __post_init__(self) -> None:
        if (self.long_prompt is None) != (self.long_prompt_above is None):
            raise ConfigError(
                f"the long-prompt prices of {self.family or 'a model'} need both the rates "
                "and the prompt size above which they apply"
            )
        for name in ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not -_INFINITY < value < _INFINITY  # math.isfinite, without its import
                or value < 0
            ):
                raise ConfigError(
                    f"the price {name} of {self.family or 'a model'} must be a number of "
                    f"USD per million tokens, zero or more, got {value!r}"
                )


def _anthropic(
    family: str,
    input: float,
    output: float,
    cache_read: float | None = None,
    *,
    long_prompt: tuple[int, Prices] | None = None,
) -> Prices:
    # Anthropic's multipliers, as every pricing tier of Claude Code's model catalog has
    # them: 5-minute writes 1.25x input, 1-hour writes 2x; reads 0.1x unless the tier
    # gives its own read price.
    read = input * 0.1 if cache_read is None else cache_read
    above, rates = long_prompt if long_prompt is not None else (None, None)
    return Prices(input, output, input * 1.25, input * 2, read, family, above, rates)


def _openai(family: str, input: float, output: float, cached: float) -> Prices:
    # OpenAI caches automatically: a write costs the ordinary input price.
    return Prices(input, output, input, input, cached, family)


def _gemini(
    family: str,
    input: float,
    output: float,
    cached: float,
    *,
    long_prompt: tuple[float, float, float] | None = None,
) -> Prices:
    # Gemini caches implicitly, so a write costs the ordinary input price; thinking
    # tokens are billed as output. The Pro models cost more for a prompt over 200,000
    # tokens, in every category.
    rates = None
    if long_prompt is not None:
        rates = _gemini(f"{family}, long prompt", *long_prompt)
    return Prices(
        input, output, input, input, cached, family, None if rates is None else 200_000, rates
    )


_HAIKU_55_LONG = (100_000, _anthropic("Claude Haiku 5.5, long prompt", 0.5, 2.5))
"""Haiku 5.5 above 100,000 prompt tokens (Claude Code's ``haiku_55`` pricing tier)."""
_SONNET_4_LONG = (200_000, _anthropic("Claude Sonnet 4.x, long prompt", 6.0, 22.5))
"""Sonnet 4, 4.5 and 4.6 above 200,000 prompt tokens (the 1M window; Anthropic's price
list: 2x input, 1.5x output)."""

# Keys are model id prefixes (normalized: lower case, no provider prefix, no ``[1m]``);
# the longest matching key wins. The bare family keys (``claude-opus`` ...) price ids of
# a generation newer than this table at the family's latest generation.
# The Claude prices are the ones the model catalog of the Claude Code CLI (2.1.332, the
# one claude-agent-sdk bundles) gives each id, except Claude 3 Opus and 3 Haiku, which
# it no longer lists (Anthropic's published prices). Not modelled: its fast mode, and
# the 1.1x of requests served with ``inference_geo: "us"``.
_DEFAULTS: dict[str, Prices] = {
    # Claude Opus
    "claude-opus": _anthropic("Claude Opus 5.5+", 4.0, 20.0, 0.2),
    "claude-opus-5-5": _anthropic("Claude Opus 5.5", 4.0, 20.0, 0.2),
    "claude-opus-5": _anthropic("Claude Opus 5", 5.0, 25.0),
    "claude-opus-4-8": _anthropic("Claude Opus 4.8", 5.0, 25.0),
    "claude-opus-4-7": _anthropic("Claude Opus 4.7", 5.0, 25.0),
    "claude-opus-4-6": _anthropic("Claude Opus 4.6", 5.0, 25.0),
    "claude-opus-4-5": _anthropic("Claude Opus 4.5", 5.0, 25.0),
    "claude-opus-4-1": _anthropic("Claude Opus 4.1", 15.0, 75.0),
    "claude-opus-4-0": _anthropic("Claude Opus 4", 15.0, 75.0),
    "claude-opus-4-2025": _anthropic("Claude Opus 4", 15.0, 75.0),
    "claude-3-opus": _anthropic("Claude Opus 3", 15.0, 75.0),
    # Claude Sonnet
    "claude-sonnet": _anthropic("Claude Sonnet 5.5+", 2.0, 10.0, 0.1),
    "claude-sonnet-5-5": _anthropic("Claude Sonnet 5.5", 2.0, 10.0, 0.1),
    "claude-sonnet-5": _anthropic("Claude Sonnet 5", 2.0, 10.0),
    "claude-sonnet-4-6": _anthropic("Claude Sonnet 4.6", 3.0, 15.0, long_prompt=_SONNET_4_LONG),
    "claude-sonnet-4": _anthropic("Claude Sonnet 4", 3.0, 15.0, long_prompt=_SONNET_4_LONG),
    "claude-sonnet-4-5": _anthropic("Claude Sonnet 4.5", 3.0, 15.0, long_prompt=_SONNET_4_LONG),
    "claude-3-7-sonnet": _anthropic("Claude Sonnet 3.7", 3.0, 15.0),
    "claude-3-5-sonnet": _anthropic("Claude Sonnet 3.5", 3.0, 15.0),
    # Claude Haiku
    "claude-haiku": _anthropic("Claude Haiku 5.5+", 0.1, 0.5, long_prompt=_HAIKU_55_LONG),
    "claude-haiku-5-5": _anthropic("Claude Haiku 5.5", 0.1, 0.5, long_prompt=_HAIKU_55_LONG),
    "claude-haiku-4-5": _anthropic("Claude Haiku 4.5", 1.0, 5.0),
    "claude-3-5-haiku": _anthropic("Claude Haiku 3.5", 0.8, 4.0),
    "claude-3-haiku": _anthropic("Claude Haiku 3", 0.25, 1.25),
    # Claude Fable and Mythos
    "claude-fable": _anthropic("Claude Fable 5.2+", 8.0, 40.0, 0.2),
    "claude-fable-5-2": _anthropic("Claude Fable 5.2", 8.0, 40.0, 0.2),
    "claude-fable-5-1": _anthropic("Claude Fable 5.1", 10.0, 50.0, 0.25),
    "claude-fable-5": _anthropic("Claude Fable 5", 10.0, 50.0),
    "claude-mythos": _anthropic("Claude Mythos 5.2+", 8.0, 40.0, 0.2),
    "claude-mythos-5-2": _anthropic("Claude Mythos 5.2", 8.0, 40.0, 0.2),
    "claude-mythos-5-1": _anthropic("Claude Mythos 5.1", 10.0, 50.0, 0.25),
    "claude-mythos-5": _anthropic("Claude Mythos 5", 10.0, 50.0),
    # OpenAI; the GPT-5.3 to 5.5 prices are the ones ccusage 20.0.24 gives Codex's
    # sessions offline (``docs/codex-facts.md``), cached input at 10% of input
    "gpt-5.5": _openai("GPT-5.5", 5.0, 30.0, 0.5),
    "gpt-5.4": _openai("GPT-5.4", 2.5, 15.0, 0.25),
    "gpt-5.3-codex": _openai("GPT-5.3 Codex", 1.75, 14.0, 0.175),
    "gpt-5": _openai("GPT-5", 1.25, 10.0, 0.125),
    "gpt-5-mini": _openai("GPT-5 mini", 0.25, 2.0, 0.025),
    "gpt-5-nano": _openai("GPT-5 nano", 0.05, 0.40, 0.005),
    "gpt-4.1": _openai("GPT-4.1", 2.0, 8.0, 0.50),
    "gpt-4.1-mini": _openai("GPT-4.1 mini", 0.40, 1.60, 0.10),
    "gpt-4.1-nano": _openai("GPT-4.1 nano", 0.10, 0.40, 0.025),
    "gpt-4o": _openai("GPT-4o", 2.50, 10.0, 1.25),
    "gpt-4o-mini": _openai("GPT-4o mini", 0.15, 0.60, 0.075),
    "o1": _openai("o1", 15.0, 60.0, 7.50),
    "o3": _openai("o3", 2.0, 8.0, 0.50),
    "o3-mini": _openai("o3-mini", 1.10, 4.40, 0.55),
    "o4-mini": _openai("o4-mini", 1.10, 4.40, 0.275),
    # Gemini: Google's list prices for the paid tier (cached input is the context-cache
    # read price; storage is not charged per request)
    "gemini-2.5-pro": _gemini("Gemini 2.5 Pro", 1.25, 10.0, 0.125, long_prompt=(2.5, 15.0, 0.25)),
    "gemini-2.5-flash": _gemini("Gemini 2.5 Flash", 0.30, 2.50, 0.03),
    "gemini-2.5-flash-lite": _gemini("Gemini 2.5 Flash-Lite", 0.10, 0.40, 0.01),
    "gemini-3-pro": _gemini("Gemini 3 Pro", 2.0, 12.0, 0.20, long_prompt=(4.0, 18.0, 0.40)),
    "gemini-3.1-pro": _gemini("Gemini 3.1 Pro", 2.0, 12.0, 0.20, long_prompt=(4.0, 18.0, 0.40)),
    "gemini-3-flash": _gemini("Gemini 3 Flash", 0.50, 3.0, 0.05),
}


class PriceTable(Mapping[str, Prices]):
    """Model id prefix -> :class:`Prices`; :meth:`lookup` finds a model's prices.

    A table made by :meth:`merged` (a price file) is looked up first, its base after:
    an entry of the user's file wins over a longer built-in prefix, so pricing
    ``claude-opus`` in a file reprices every Opus model.
    """

    def __init__(self, entries: Mapping[str, Prices], base: PriceTable | None = None) -> None:
        self._entries = {normalize_model(k): v for k, v in entries.items()}
        self._base = base
        # Longest prefix first, so ``gpt-4o-mini`` wins over ``gpt-4o``.
        self._order = sorted(self._entries, key=len, reverse=True)

    def _layers(self) -> list[PriceTable]:
        layers: list[PriceTable] = []
        table: PriceTable | None = self
        while table is not None:
            layers.append(table)
            table = table._base
        return layers

    def _all(self) -> dict[str, Prices]:
        merged: dict[str, Prices] = {}
        for layer in reversed(self._layers()):
            merged.update(layer._entries)
        return merged

    def __getitem__(self, key: str) -> Prices:
        return self._all()[normalize_model(key)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def match(self, model: str | None) -> tuple[str, Prices] | None:
        """The key and prices that apply to ``model``; ``None`` when nothing matches."""
        if not model:
            return None
        name = normalize_model(model)
        layers = self._layers()
        for layer in layers:
            for key in layer._order:
                if name.startswith(key):
                    return key, layer._entries[key]
        if name.startswith("claude"):
            for family in FAMILIES:
                key = f"claude-{family}"
                if family not in name:
                    continue
                for layer in layers:
                    if key in layer._entries:
                        return key, layer._entries[key]
        return None

    def lookup(self, model: str | None) -> Prices | None:
        """The prices of ``model``, or ``None`` for a model the table does not know."""
        found = self.match(model)
        return None if found is None else found[1]

    def merged(self, overrides: Mapping[str, Prices]) -> PriceTable:
        """A table whose ``overrides`` are looked up before this one."""
        return PriceTable(overrides, base=self)


DEFAULT_PRICES = PriceTable(_DEFAULTS)
"""List prices, standard tier: Claude as the Claude Code CLI's model catalog prices it
(Claude 3.5 to 5.5, Haiku 5.5's long-prompt rates included), Sonnet 4.x's rates above
200k prompt tokens as Anthropic's price list has them, OpenAI as published (GPT-4o to
GPT-5.5, the Codex models included)."""


def _entry(key: str, raw: object, source: str) -> Prices:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{source}: the prices of {key!r} must be a table of numbers")
    unknown = set(raw) - {"input", "output", "cache_write_5m", "cache_write_1h", "cache_read"}
    if unknown - {"family"}:
        raise ConfigError(
            f"{source}: unknown price field(s) {sorted(unknown - {'family'})} for {key!r}; "
            "use input, output, cache_write_5m, cache_write_1h, cache_read"
        )
    for required in ("input", "output"):
        if required not in raw:
            raise ConfigError(f"{source}: the prices of {key!r} need {required!r}")
    base = raw["input"]
    # A cache price left out costs what uncached input costs (no caching discount assumed).
    family = raw.get("family", key)
    return Prices(
        input=base,
        output=raw["output"],
        cache_write_5m=raw.get("cache_write_5m", base),
        cache_write_1h=raw.get("cache_write_1h", base),
        cache_read=raw.get("cache_read", base),
        family=family if isinstance(family, str) else key,
    )


def load_prices(path: str | os.PathLike[str], base: PriceTable = DEFAULT_PRICES) -> PriceTable:
    """``base`` with the entries of a JSON or TOML price file laid over it.

    The file maps model id prefixes to prices in USD per million tokens, either at its
    top level or under ``models``; ``input`` and ``output`` are required, cache prices
    default to the input price::

        [models."claude-opus-4-6"]
        input = 5.0
        output = 25.0
        cache_write_5m = 6.25
        cache_write_1h = 10.0
        cache_read = 0.5
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise ConfigError(f"cannot read the price file {name!r}: {exc.strerror}") from None
    raw: Any
    try:
        if name.lower().endswith(".toml"):
            import tomllib  # noqa: PLC0415 — tomllib compiles its regexes at import (~3 ms of analyze's start); only a .toml file needs it

            raw = tomllib.loads(data.decode("utf-8"))
        else:
            raw = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"the price file {name!r} does not parse: {exc}") from None
    if isinstance(raw, dict) and isinstance(raw.get("models"), dict):
        raw = raw["models"]
    if not isinstance(raw, dict) or not raw:
        raise ConfigError(f"the price file {name!r} holds no table of model prices")
    return base.merged({str(k): _entry(str(k), v, name) for k, v in raw.items()})


class UsageLike(Protocol):
    """Anything with Anthropic's four usage counts (``ctxrelay.runtime.model.Usage``,
    ``ctxrelay.transcripts.Usage``); a ``cache_creation_1h_tokens`` attribute, when
    present, prices that share of the writes at the 1-hour rate."""

    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def cache_creation_input_tokens(self) -> int: ...
    @property
    def cache_read_input_tokens(self) -> int: ...


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        return 0
    return int(value)


def cost(usage: UsageLike | Mapping[str, Any], prices: Prices) -> float:
    """USD for ``usage`` at ``prices``.

    ``usage`` is an object with the four counts or a mapping in Anthropic's wire shape
    (``cache_creation.ephemeral_1h_input_tokens`` splits the writes); writes without a
    split are 5-minute writes, the API's default.
    """
    if isinstance(usage, Mapping):
        written = _count(usage.get("cache_creation_input_tokens"))
        split = usage.get("cache_creation")
        one_hour = (
            _count(split.get("ephemeral_1h_input_tokens")) if isinstance(split, Mapping) else 0
        )
        if "cache_creation_1h_tokens" in usage:
            one_hour = _count(usage.get("cache_creation_1h_tokens"))
        fresh = _count(usage.get("input_tokens"))
        read = _count(usage.get("cache_read_input_tokens"))
        out = _count(usage.get("output_tokens"))
    else:
        written = _count(usage.cache_creation_input_tokens)
        one_hour = _count(getattr(usage, "cache_creation_1h_tokens", 0))
        fresh = _count(usage.input_tokens)
        read = _count(usage.cache_read_input_tokens)
        out = _count(usage.output_tokens)
    one_hour = min(one_hour, written)
    above = prices.long_prompt_above
    if prices.long_prompt is not None and above is not None and fresh + written + read > above:
        prices = prices.long_prompt
    return (
        fresh * prices.input
        + (written - one_hour) * prices.cache_write_5m
        + one_hour * prices.cache_write_1h
        + read * prices.cache_read
        + out * prices.output
    ) / _PER


def openai_usage(raw: Mapping[str, Any]) -> dict[str, int]:
    """OpenAI usage (Chat Completions or Responses) in Anthropic's categories: cached
    prompt tokens become cache reads and leave ``input_tokens``; no cache writes."""
    prompt = _count(raw.get("prompt_tokens", raw.get("input_tokens")))
    details = raw.get("prompt_tokens_details", raw.get("input_tokens_details"))
    cached = _count(details.get("cached_tokens")) if isinstance(details, Mapping) else 0
    cached = min(cached, prompt)
    return {
        "input_tokens": prompt - cached,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": cached,
        "output_tokens": _count(raw.get("completion_tokens", raw.get("output_tokens"))),
    }
