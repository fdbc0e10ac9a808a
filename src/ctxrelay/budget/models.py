"""The model table: each model's facts, in the one place the runtime, the Claude Code
plugin and the analyzer read them.

For every model ctxrelay knows: its provider, its context window, its largest output,
and the key of its prices in :mod:`ctxrelay.pricing`; the default output reserve and the
family (Haiku subagents get a smaller bound) follow from these by the rules below.

The Claude windows and largest outputs are the model catalog of the Claude Code CLI
2.1.332 (the one ``claude-agent-sdk`` bundles; ``tests/budget/test_models.py`` reads that
catalog and compares): a natively 1M model has a 1,000,000-token window in Claude Code
and on the API alike, and an id ending in ``[1m]`` opts a 200k model into the long
window. The OpenAI ones are OpenAI's published limits; the Gemini ones the window the
Gemini CLI gives them (``docs/gemini-facts.md``) and Google's largest output.

Pure data and string rules that import nothing but :mod:`ctxrelay.budget.bounds`: the
plugin's hooks read it.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from ctxrelay.budget.bounds import (
    DEFAULT_RESERVE_CAP,
    LONG_CONTEXT_WINDOW,
    RESERVE_WINDOW_DIVISOR,
)

__all__ = [
    "FAMILIES",
    "MODELS",
    "ModelFacts",
    "canonical_model",
    "context_window",
    "default_reserve",
    "family_of",
    "fit_reserve",
    "is_haiku",
    "model_facts",
    "normalize_model",
]

# canonical model id -> (provider, context window, largest output, price key)
MODELS: Final[dict[str, tuple[str, int, int, str]]] = {
    "claude-opus-5-5": ("anthropic", 1_000_000, 128_000, "claude-opus-5-5"),
    "claude-opus-5": ("anthropic", 1_000_000, 128_000, "claude-opus-5"),
    "claude-opus-4-8": ("anthropic", 1_000_000, 128_000, "claude-opus-4-8"),
    "claude-opus-4-7": ("anthropic", 1_000_000, 128_000, "claude-opus-4-7"),
    "claude-opus-4-6": ("anthropic", 200_000, 128_000, "claude-opus-4-6"),
    "claude-opus-4-5": ("anthropic", 200_000, 64_000, "claude-opus-4-5"),
    "claude-opus-4-1": ("anthropic", 200_000, 32_000, "claude-opus-4-1"),
    "claude-opus-4-0": ("anthropic", 200_000, 32_000, "claude-opus-4-0"),
    "claude-sonnet-5-5": ("anthropic", 1_000_000, 128_000, "claude-sonnet-5-5"),
    "claude-sonnet-5": ("anthropic", 1_000_000, 128_000, "claude-sonnet-5"),
    "claude-sonnet-4-6": ("anthropic", 200_000, 128_000, "claude-sonnet-4-6"),
    "claude-sonnet-4-5": ("anthropic", 200_000, 64_000, "claude-sonnet-4-5"),
    "claude-sonnet-4-0": ("anthropic", 200_000, 64_000, "claude-sonnet-4"),
    "claude-3-7-sonnet": ("anthropic", 200_000, 64_000, "claude-3-7-sonnet"),
    "claude-3-5-sonnet": ("anthropic", 200_000, 8_192, "claude-3-5-sonnet"),
    "claude-haiku-5-5": ("anthropic", 1_000_000, 128_000, "claude-haiku-5-5"),
    "claude-haiku-4-5": ("anthropic", 200_000, 64_000, "claude-haiku-4-5"),
    "claude-3-5-haiku": ("anthropic", 200_000, 8_192, "claude-3-5-haiku"),
    "claude-fable-5-2": ("anthropic", 1_000_000, 128_000, "claude-fable-5-2"),
    "claude-fable-5-1": ("anthropic", 1_000_000, 128_000, "claude-fable-5-1"),
    "claude-fable-5": ("anthropic", 1_000_000, 128_000, "claude-fable-5"),
    "claude-mythos-5-2": ("anthropic", 1_000_000, 128_000, "claude-mythos-5-2"),
    "claude-mythos-5-1": ("anthropic", 1_000_000, 128_000, "claude-mythos-5-1"),
    "claude-mythos-5": ("anthropic", 1_000_000, 128_000, "claude-mythos-5"),
    "gpt-5.5": ("openai", 272_000, 128_000, "gpt-5.5"),
    "gpt-5.4": ("openai", 272_000, 128_000, "gpt-5.4"),
    "gpt-5.3-codex": ("openai", 272_000, 128_000, "gpt-5.3-codex"),
    "gpt-5.1": ("openai", 400_000, 128_000, "gpt-5"),
    "gpt-5": ("openai", 400_000, 128_000, "gpt-5"),
    "gpt-5-mini": ("openai", 400_000, 128_000, "gpt-5-mini"),
    "gpt-5-nano": ("openai", 400_000, 128_000, "gpt-5-nano"),
    "gpt-4.1": ("openai", 1_047_576, 32_768, "gpt-4.1"),
    "gpt-4.1-mini": ("openai", 1_047_576, 32_768, "gpt-4.1-mini"),
    "gpt-4.1-nano": ("openai", 1_047_576, 32_768, "gpt-4.1-nano"),
    "gpt-4o": ("openai", 128_000, 16_384, "gpt-4o"),
    "gpt-4o-mini": ("openai", 128_000, 16_384, "gpt-4o-mini"),
    "o4-mini": ("openai", 200_000, 100_000, "o4-mini"),
    "o3": ("openai", 200_000, 100_000, "o3"),
    "o3-mini": ("openai", 200_000, 100_000, "o3-mini"),
    "o1": ("openai", 200_000, 100_000, "o1"),
    # The Gemini CLI gives every model it knows a 1,048,576-token window (0.61.0's
    # ``tokenLimit``) and compresses at half of it; the largest output is Google's.
    "gemini-2.5-pro": ("google", 1_048_576, 65_536, "gemini-2.5-pro"),
    "gemini-2.5-flash": ("google", 1_048_576, 65_536, "gemini-2.5-flash"),
    "gemini-2.5-flash-lite": ("google", 1_048_576, 65_536, "gemini-2.5-flash-lite"),
    "gemini-3-pro-preview": ("google", 1_048_576, 65_536, "gemini-3-pro"),
    "gemini-3.1-pro-preview": ("google", 1_048_576, 65_536, "gemini-3.1-pro"),
    "gemini-3-flash-preview": ("google", 1_048_576, 65_536, "gemini-3-flash"),
}

FAMILIES: Final = ("opus", "sonnet", "haiku", "fable", "mythos")
"""The Claude model families; every Claude id names its own (``claude-haiku-4-5``)."""

# Ids whose dated form drops the minor version: ``claude-opus-4-20250514`` is Opus 4.0.
_ALIASES: Final = {
    "claude-opus-4": "claude-opus-4-0",
    "claude-sonnet-4": "claude-sonnet-4-0",
}


class ModelFacts(NamedTuple):
    """One row of the table, under its canonical id."""

    model: str
    provider: str
    context_window: int
    max_output_tokens: int
    price_key: str
    """The key of this model's prices in ``ctxrelay.pricing.DEFAULT_PRICES``."""

    @property
    def output_reserve(self) -> int:
        """The default output reserve: :func:`default_reserve` of this row."""
        return default_reserve(self.max_output_tokens, self.context_window)

    @property
    def family(self) -> str | None:
        return family_of(self.model)


def fit_reserve(reserve: int, window: int) -> int:
    """``reserve``, but at most ``window // RESERVE_WINDOW_DIVISOR``: the one small-window
    rule of both hosts' reserves (0 for a window too small to keep any)."""
    return max(0, min(reserve, window // RESERVE_WINDOW_DIVISOR))


def default_reserve(max_output_tokens: int, context_window: int) -> int:
    """A model's default output reserve: its largest output, capped at
    ``DEFAULT_RESERVE_CAP`` and by :func:`fit_reserve`."""
    return fit_reserve(min(max_output_tokens, DEFAULT_RESERVE_CAP), context_window)


def normalize_model(model: str) -> str:
    """A model id in lower case without its provider prefix or ``[1m]``:
    ``us.anthropic.claude-sonnet-4-5-20250929-v1:0``, ``openai/gpt-4o`` and
    ``claude-opus-4-6[1m]`` become ``claude-sonnet-4-5-20250929-v1:0``, ``gpt-4o`` and
    ``claude-opus-4-6``."""
    name = model.strip().lower()
    if name.endswith("[1m]"):
        name = name[: -len("[1m]")]
    name = name.rsplit("/", 1)[-1]
    at = name.find("claude-")
    if at > 0:
        name = name[at:]
    return name


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _without_suffix(name: str) -> str:
    """``name`` less one version suffix: ``-latest``, ``@20250929``, ``-v1:0``,
    ``-20250929`` or ``-2025-08-07`` (string tests: ``re`` would cost a hook)."""
    if name.endswith("-latest"):
        return name[: -len("-latest")]
    if len(name) > 9 and name[-9] == "@" and _digits(name[-8:]):
        return name[:-9]
    date = name[-11:].rjust(11)  # -YYYY-MM-DD
    if date[0] + date[5] + date[8] == "---" and _digits(date.replace("-", "")):
        return name[:-11]
    head, dash, tail = name.rpartition("-")
    if not dash:
        return name
    if len(tail) == 8 and _digits(tail):
        return head
    if tail.startswith("v"):
        major, colon, minor = tail[1:].partition(":")
        if _digits(major) and (not colon or _digits(minor)):
            return head
    return name


def canonical_model(model: str) -> str:
    """The table's key for ``model``: ``us.anthropic.claude-sonnet-4-5-20250929-v1:0`` →
    ``claude-sonnet-4-5``, ``openai/gpt-4o-2024-08-06`` → ``gpt-4o``."""
    name = normalize_model(model)
    while (shorter := _without_suffix(name)) != name:
        name = shorter
    return _ALIASES.get(name, name)


def model_facts(model: str | None, provider: str | None = None) -> ModelFacts | None:
    """The table's row for ``model`` (of ``provider``, when given), or ``None``."""
    if not model:
        return None
    key = canonical_model(model)
    row = MODELS.get(key)
    if row is None or (provider is not None and row[0] != provider):
        return None
    return ModelFacts(key, *row)


def context_window(model: str | None) -> int | None:
    """The window Claude Code and the API give ``model``: ``LONG_CONTEXT_WINDOW`` for an
    id ending in ``[1m]`` (or ``-1m``), else the table's; ``None`` for an unknown model."""
    if model:
        lowered = model.strip().lower()
        if lowered.endswith(("[1m]", "-1m")):
            return LONG_CONTEXT_WINDOW
    row = model_facts(model)
    return None if row is None else row.context_window


def family_of(model: str | None) -> str | None:
    """The Claude family ``model`` names (``haiku`` for ``claude-haiku-4-5``, and for an id
    newer than the table), or ``None`` for a model of another vendor."""
    if not model:
        return None
    name = normalize_model(model)
    if name in FAMILIES:  # Claude Code's aliases: ``haiku``, ``opus``
        return name
    if not name.startswith("claude"):
        return None
    for family in FAMILIES:
        if family in name:
            return family
    return None


def is_haiku(model: str | None) -> bool:
    """Whether ``model`` is a Haiku model (its subagents get the smaller context bound)."""
    return family_of(model) == "haiku"
