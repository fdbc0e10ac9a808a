"""Values as people read them: ``6,200``, ``yes``, ``$0.0186``, ``-`` for nothing, nested
fields as dotted keys (``usage.input_tokens``), never a Python repr."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["fields", "show_value"]


def show_value(value: Any, key: str = "") -> str:
    """One value as a reader would write it."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if key.endswith("cost_usd") or key == "max_cost":
            return f"${value:.4f}"
        return f"{value:,.6g}"
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        if not value:
            return "none"
        return "; ".join(f"{k} {v}" for k, v in fields(value))
    if isinstance(value, (list, tuple)):
        return ", ".join(show_value(v) for v in value) if value else "none"
    return str(value)


def fields(metadata: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    """``(key, shown value)`` for every field, nested mappings as dotted keys."""
    for key, value in metadata.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            yield from fields(value, f"{name}.")
        else:
            yield name, show_value(value, str(key))
