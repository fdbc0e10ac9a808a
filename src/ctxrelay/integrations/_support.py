"""What every integration module shares: the guarded import, the framework's version
check, the model table, and the warnings an integration gives once."""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import json
import warnings
import weakref
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ctxrelay.budget import Budget
from ctxrelay.budget.models import model_facts
from ctxrelay.errors import MissingExtraError, UnknownModelError, UnsupportedFrameworkError
from ctxrelay.runtime.registry import resolve_model

__all__ = [
    "IntegrationWarning",
    "KeyCache",
    "budget_for",
    "check_versions",
    "digest",
    "provider_of",
    "require",
    "supported_ranges",
    "warn_once",
]

_DIST = "ctxrelay"


class IntegrationWarning(UserWarning):
    """A framework integration is wired or configured so that ctxrelay cannot do its work
    fully (a seam missing, a stream without usage); each is given once per relay."""


class KeyCache:
    """A codec's keys by object identity, for the frameworks that hand the same message
    objects back at every model call (pydantic-ai, LangChain): the relay matches the
    whole input to the store at every call, and a key that hashes a message's text would
    otherwise be computed again each time. An entry goes when its object does; objects
    that cannot be weakly referenced are not cached."""

    def __init__(self, compute: Callable[[Any], str]) -> None:
        self._compute = compute
        self._keys: dict[int, tuple[weakref.ref[Any], str]] = {}

    def __call__(self, item: Any) -> str:
        hit = self._keys.get(id(item))
        if hit is not None and hit[0]() is item:
            return hit[1]
        key = self._compute(item)
        at = id(item)
        try:
            ref = weakref.ref(item, lambda _ref: self._keys.pop(at, None))
        except TypeError:
            return key
        self._keys[at] = (ref, key)
        return key


def digest(value: Any) -> str:
    """A short stable digest of ``value`` as JSON (what the codecs' keys are made of)."""
    data = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha1(data.encode("utf-8")).hexdigest()[:20]


def require(module: str, feature: str, extra: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` naming ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(feature, extra) from None


def supported_ranges(extra: str) -> dict[str, str]:
    """The distributions ctxrelay's ``extra`` installs and the versions it supports
    (``{"openai-agents": ">=0.24,<0.25"}``), read from ctxrelay's own metadata, whose one
    source is ``pyproject.toml``'s extras; empty when ctxrelay runs uninstalled."""
    from packaging.requirements import Requirement  # noqa: PLC0415 — packaging (~15 ms: its markers load platform tags and sysconfig): only a version check needs it

    try:
        requires = importlib.metadata.requires(_DIST) or []
    except importlib.metadata.PackageNotFoundError:
        return {}
    ranges: dict[str, str] = {}
    for line in requires:
        req = Requirement(line)
        if req.marker is not None and req.marker.evaluate({"extra": extra}):
            ranges[req.name] = str(req.specifier)
    return ranges


def check_versions(feature: str, extra: str) -> None:
    """Raise :class:`UnsupportedFrameworkError` when an installed distribution of
    ``extra`` is outside the range ctxrelay supports (one that is not installed is
    the missing-extra check's to report)."""
    from packaging.specifiers import SpecifierSet  # noqa: PLC0415 — packaging (~15 ms): only a version check needs it

    for name, spec in supported_ranges(extra).items():
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        if not SpecifierSet(spec).contains(version, prereleases=True):
            raise UnsupportedFrameworkError(feature, extra, name, version, spec)


def warn_once(seen: set[str], what: str, message: str) -> None:
    """Warn ``message`` (an :class:`IntegrationWarning`) unless ``what`` is in ``seen``."""
    if what in seen:
        return
    seen.add(what)
    warnings.warn(message, IntegrationWarning, stacklevel=3)


def provider_of(model: str, provider: str | None) -> tuple[str, str]:
    """``(provider, model)`` for the model table: an explicit ``provider``, else the
    model's own prefix (``anthropic:claude-sonnet-4-5``), else the vendor the table
    lists the model under, else ``openai`` (OpenAI-compatible servers)."""
    if provider is not None:
        return provider, model
    head, colon, tail = model.partition(":")
    if colon and head and tail and not any(c in head for c in "./"):
        return head, tail
    facts = model_facts(model)
    return (facts.provider if facts is not None else "openai"), model


def budget_for(
    provider: str,
    model: str,
    *,
    limit: int | None = None,
    reserve: int | None = None,
    threshold: float = 60,
) -> Budget:
    """The budget of ``provider:model`` from the model table (its window and output
    reserve), with ``limit``/``reserve`` laid over it and the slider at ``threshold``
    (100 is Off: block instead of rolling over)."""
    try:
        info = resolve_model(provider, model, limit=limit, reserve=reserve)
    except UnknownModelError:
        facts = model_facts(model)
        listed = (
            f" (the model table lists {facts.model} under provider {facts.provider!r}: pass "
            f"provider={facts.provider!r})"
            if facts is not None and facts.provider != provider
            else ""
        )
        raise UnknownModelError(
            f"ctxrelay does not know the context window of {provider}:{model}{listed}; "
            f"pass budget=budget_for({provider!r}, {model!r}, limit=TOKENS) with the "
            "window your server gives it (and reserve= for its output)"
        ) from None
    return Budget(
        limit=info.context_window, output_reserve=info.output_reserve, threshold=threshold
    )
