"""Model providers behind one ``resolve("provider:model")``.

``scripted:PATH`` plays back a JSON script (tests, the demo); ``anthropic:MODEL``,
``openai:MODEL`` (the Responses API) and ``openai-chat:MODEL`` (Chat Completions, for
compatible servers without Responses). Each lives in its module of :data:`PROVIDERS`
(``ctxrelay.runtime.providers.scripted`` / ``.anthropic`` / ``.openai_responses`` /
``.openai_chat``), imported only when asked for: the scripted path never pays for an SDK,
nor a real model's for the test kit whose step format the scripted model reads.

A provider module exposes ``create(model: str, **options) -> ModelProvider`` and may
expose ``model_defaults(model: str) -> ModelDefaults | None`` (context window, output
reserve) so ``ctxrelay run`` can pick a budget without ``--limit``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, cast

from ctxrelay.budget.bounds import DEFAULT_CONTEXT_WINDOW, DEFAULT_RESERVE_CAP
from ctxrelay.errors import ConfigError
from ctxrelay.runtime.model import ModelProvider

__all__ = [
    "PROVIDERS",
    "SCRIPTED_DEFAULTS",
    "ModelDefaults",
    "model_defaults",
    "resolve",
    "split_spec",
]

PROVIDERS: dict[str, str] = {
    "scripted": "ctxrelay.runtime.providers.scripted",
    "anthropic": "ctxrelay.runtime.providers.anthropic",
    "openai": "ctxrelay.runtime.providers.openai_responses",
    "openai-chat": "ctxrelay.runtime.providers.openai_chat",
}


@dataclass(frozen=True, slots=True)
class ModelDefaults:
    """What a provider knows about a model: its window and a sensible output reserve."""

    context_window: int
    output_reserve: int


SCRIPTED_DEFAULTS = ModelDefaults(
    context_window=DEFAULT_CONTEXT_WINDOW, output_reserve=DEFAULT_RESERVE_CAP
)
"""The scripted model plays a Claude-sized window unless ``--limit`` says otherwise."""


def split_spec(model_spec: str) -> tuple[str, str]:
    """``"anthropic:claude-sonnet-4-5"`` → ``("anthropic", "claude-sonnet-4-5")``."""
    kind, sep, model = model_spec.partition(":")
    if not sep or not model:
        raise ConfigError(
            f"--model must look like provider:model (one of {', '.join(PROVIDERS)}), "
            f"got {model_spec!r}"
        )
    if kind not in PROVIDERS:
        raise ConfigError(f"unknown model provider {kind!r}; use one of {', '.join(PROVIDERS)}")
    return kind, model


def _module(kind: str) -> Any:
    try:
        return importlib.import_module(PROVIDERS[kind])
    except ModuleNotFoundError as exc:
        if exc.name == PROVIDERS[kind]:
            raise ConfigError(f"the {kind} provider is not part of this build") from None
        raise


def resolve(model_spec: str, **options: Any) -> ModelProvider:
    """The provider for ``provider:model``; ``options`` go to the provider (e.g.
    ``base_url``, ``api_key``, ``log`` for the scripted model)."""
    kind, model = split_spec(model_spec)
    module = _module(kind)
    create = getattr(module, "create", None)
    if create is None:
        raise ConfigError(f"the {kind} provider is not part of this build")
    return cast(ModelProvider, create(model, **options))


def model_defaults(model_spec: str) -> ModelDefaults | None:
    """The provider's defaults for the model, or ``None`` when it does not know it."""
    kind, model = split_spec(model_spec)
    if kind == "scripted":
        return SCRIPTED_DEFAULTS
    module = _module(kind)
    lookup = getattr(module, "model_defaults", None)
    if lookup is None:
        return None
    found = lookup(model)
    if found is None:
        return None
    return ModelDefaults(int(found.context_window), int(found.output_reserve))
