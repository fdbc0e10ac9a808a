"""What every integration module shares: the guarded import and the model table."""

from __future__ import annotations

import importlib
from types import ModuleType

from ctxrelay.budget import Budget
from ctxrelay.errors import MissingExtraError
from ctxrelay.runtime.registry import resolve_model

__all__ = ["budget_for", "require"]


def require(module: str, feature: str, extra: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` naming ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(feature, extra) from None


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
    info = resolve_model(provider, model, limit=limit, reserve=reserve)
    return Budget(
        limit=info.context_window, output_reserve=info.output_reserve, threshold=threshold
    )
