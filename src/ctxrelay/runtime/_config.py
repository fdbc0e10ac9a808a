"""How a session runs: ``SessionConfig``, stored with the session so a resume needs no
flags, and the defaults it starts from."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ctxrelay.budget import DEFAULT_NOTES_FILE, Budget
from ctxrelay.errors import ConfigError
from ctxrelay.runtime.cost import Pricer, Prices, prices_from_json, prices_model, prices_to_json

__all__ = [
    "DEFAULT_SYSTEM",
    "NewContextPolicy",
    "SessionConfig",
    "cap_reached",
    "unpriced_cost_cap",
]

NewContextPolicy = Literal["offered", "conditional", "forbidden"]

DEFAULT_SYSTEM = (
    "You are a careful software agent working in a workspace directory through tools. "
    "Work in small units and keep a notes file current (goal, what is done, what is "
    "next, decisions, files touched). When ctxrelay asks you to hand off, finish the "
    "unit you are in, checkpoint the notes, confirm the write, and then call "
    "new_context in a later step."
)


@dataclass(frozen=True, slots=True)
class SessionConfig:
    """How a session runs; stored with the session so ``--resume`` needs no flags.

    ``new_context``: ``offered`` (the tool is there), ``conditional`` (it may be hidden by
    deferred tools or middleware: the handoff request says "if it is available") or
    ``forbidden`` (tool policy: the agent only checkpoints; the window rolls over at the
    limit). ``max_turns`` counts model responses in the session; ``max_cost`` is USD.
    """

    budget: Budget
    workspace: Path
    system: str = DEFAULT_SYSTEM
    notes_file: str = DEFAULT_NOTES_FILE
    new_context: NewContextPolicy = "offered"
    active: bool = True
    max_output_tokens: int | None = None
    max_turns: int | None = None
    max_cost: float | None = None
    prices: Prices | None = None

    def __post_init__(self) -> None:
        if self.new_context not in ("offered", "conditional", "forbidden"):
            raise ConfigError("new_context must be offered, conditional or forbidden")
        if self.max_turns is not None and (isinstance(self.max_turns, bool) or self.max_turns < 0):
            raise ConfigError(f"max_turns must be zero or more, got {self.max_turns!r}")
        if self.max_cost is not None and not (math.isfinite(self.max_cost) and self.max_cost >= 0):
            raise ConfigError(f"max_cost must be zero or more USD, got {self.max_cost!r}")
        if self.max_output_tokens is not None and self.max_output_tokens <= 0:
            raise ConfigError("max_output_tokens must be positive")

    def to_json(self) -> dict[str, Any]:
        b = self.budget
        return {
            "limit": b.limit,
            "output_reserve": b.output_reserve,
            "threshold": b.threshold,
            "warning_lead": b.warning_lead,
            "workspace": str(self.workspace),
            "system": self.system,
            "notes_file": self.notes_file,
            "new_context": self.new_context,
            "active": self.active,
            "max_output_tokens": self.max_output_tokens,
            "max_turns": self.max_turns,
            "max_cost": self.max_cost,
            "prices": prices_to_json(self.prices) if self.prices else None,
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> SessionConfig:
        try:
            budget = Budget(
                limit=int(raw["limit"]),
                output_reserve=int(raw["output_reserve"]),
                threshold=raw["threshold"],
                warning_lead=raw["warning_lead"],
            )
            prices = raw.get("prices")
            return cls(
                budget=budget,
                workspace=Path(raw["workspace"]),
                system=str(raw.get("system", DEFAULT_SYSTEM)),
                notes_file=str(raw.get("notes_file", DEFAULT_NOTES_FILE)),
                new_context=raw.get("new_context", "offered"),
                active=bool(raw.get("active", True)),
                max_output_tokens=raw.get("max_output_tokens"),
                max_turns=raw.get("max_turns"),
                max_cost=raw.get("max_cost"),
                prices=prices_from_json(prices) if prices else None,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"the stored session configuration is unusable: {exc}") from None


def cap_reached(config: SessionConfig, *, turns: int, cost_usd: float) -> tuple[str, str] | None:
    """``(reason, message)`` when the session has reached its ``max_turns`` (model
    responses) or ``max_cost`` (USD) cap, so it pauses before the next dispatch."""
    if config.max_turns is not None and turns >= config.max_turns:
        return (
            "max_turns",
            f"the session reached its cap of {config.max_turns} turns; resume with a "
            "higher --max-turns to continue",
        )
    if config.max_cost is not None and cost_usd >= config.max_cost:
        return (
            "max_cost",
            f"the session has cost ${cost_usd:.4f}, reaching its cap of "
            f"${config.max_cost:.4f}; resume with a higher --max-cost to continue",
        )
    return None


def unpriced_cost_cap(config: SessionConfig, model: str, pricer: Pricer) -> str | None:
    """The notice for a cost cap that cannot trip (the pricer has no prices for
    ``model``, so every response counts as $0), or ``None``."""
    cap = config.max_cost
    if cap is None or cap <= 0 or prices_model(pricer, model):
        return None
    return (
        f"--max-cost ${cap:.4f} cannot be enforced: ctxrelay has no prices for "
        f"{model}, so its responses count as $0; use --max-turns to bound the run"
    )
