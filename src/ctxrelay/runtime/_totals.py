"""What a session has spent: responses, tokens and USD, per window and in all."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxrelay.runtime.model import Usage

__all__ = ["Totals", "usage_of"]


@dataclass(slots=True)
class Totals:
    """The session's running totals, re-derived from its response rows on resume."""

    turns: int = 0
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    windows: dict[str, dict[str, float]] = field(default_factory=dict)

    def add(self, window_id: str, usage: Usage, cost: float) -> None:
        self.turns += 1
        self.cost_usd += cost
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cache_creation_input_tokens += usage.cache_creation_input_tokens
        self.cache_read_input_tokens += usage.cache_read_input_tokens
        w = self.windows.setdefault(
            window_id, {"turns": 0, "cost_usd": 0.0, "input_tokens": 0, "output_tokens": 0}
        )
        w["turns"] += 1
        w["cost_usd"] += cost
        w["input_tokens"] += usage.context_tokens
        w["output_tokens"] += usage.output_tokens

    @property
    def usage(self) -> Usage:
        return Usage(
            self.input_tokens,
            self.output_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "cost_usd": round(self.cost_usd, 10),
            "usage": {
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "cache_creation_input_tokens": self.cache_creation_input_tokens,
                "cache_read_input_tokens": self.cache_read_input_tokens,
            },
            "window_costs": {k: dict(v) for k, v in self.windows.items()},
        }


def usage_of(meta: Mapping[str, Any]) -> Usage:
    """The usage a response row recorded (zero for rows older than usage)."""
    raw = meta.get("usage")
    if not isinstance(raw, Mapping):
        return Usage()
    return Usage(
        int(raw.get("input_tokens", 0)),
        int(raw.get("output_tokens", 0)),
        int(raw.get("cache_creation_input_tokens", 0)),
        int(raw.get("cache_read_input_tokens", 0)),
    )
