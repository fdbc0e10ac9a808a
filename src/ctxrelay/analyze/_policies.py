"""The policies a transcript can be replayed under, as the CLI spells them."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ctxrelay.budget.bounds import CONTEXT_PERCENT
from ctxrelay.errors import ConfigError

__all__ = ["DEFAULT_POLICIES", "Policy", "Sweep", "parse_policies", "parse_policy", "parse_sweep"]

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Literal

    PolicyKind = Literal["none", "compact", "handoff", "mask"]


@dataclass(frozen=True, slots=True)
class Policy:
    """``none`` (as recorded), ``compact`` (Claude Code's auto-compaction), ``handoff``
    at ``threshold`` percent of the window (ctxrelay's slider), or ``mask`` (Claude
    Code's compaction with observation masking); ``mask`` is the number of newest
    requests whose tool results stay whole (``mask:N``, ``handoff:P+mask:N``)."""

    kind: PolicyKind
    threshold: float | None = None
    mask: int | None = None

    def __str__(self) -> str:
        if self.kind == "mask":
            return f"mask:{self.mask}"
        if self.kind != "handoff":
            return self.kind
        assert self.threshold is not None
        value = self.threshold
        text = f"handoff:{int(value) if float(value).is_integer() else value}"
        return text if self.mask is None else f"{text}+mask:{self.mask}"


DEFAULT_POLICIES = (Policy("none"), Policy("compact"), Policy("handoff", CONTEXT_PERCENT))


def _percent(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"{what} must be a percentage, got {text!r}") from None
    if not math.isfinite(value) or not 0 < value < 100:
        raise ConfigError(f"{what} must be a percentage above 0 and below 100, got {text!r}")
    return value


def _requests(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigError(
            f"mask:N keeps the newest N requests whole; N must be 1 or more, got {text!r}"
        )
    return value


def parse_policy(text: str) -> Policy:
    """``none``, ``compact``, ``handoff`` (the default slider), ``handoff:P``,
    ``mask:N`` or ``handoff:P+mask:N``."""
    head, plus, tail = text.strip().lower().partition("+")
    mask = None
    if plus:
        name, _, arg = tail.partition(":")
        if name != "mask" or not arg:
            raise ConfigError(f"unknown policy {text!r}; only handoff:P+mask:N combines")
        mask = _requests(arg)
    name, _, arg = head.partition(":")
    if name in ("none", "compact") and not arg and mask is None:
        return Policy(name)  # type: ignore[arg-type]
    if name == "mask" and arg and mask is None:
        return Policy("mask", mask=_requests(arg))
    if name == "handoff":
        if not arg:
            return Policy("handoff", CONTEXT_PERCENT, mask)
        return Policy("handoff", _percent(arg, "the handoff slider"), mask)
    raise ConfigError(
        f"unknown policy {text!r}; use none, compact, handoff:P with P a percentage, "
        "mask:N or handoff:P+mask:N with N a number of requests"
    )


def parse_policies(texts: list[str]) -> tuple[Policy, ...]:
    """Policies from repeated or comma-separated ``--policy`` values, first one wins."""
    found: dict[str, Policy] = {}
    for text in texts:
        for part in text.split(","):
            if part.strip():
                policy = parse_policy(part)
                found.setdefault(str(policy), policy)
    return tuple(found.values())


@dataclass(frozen=True, slots=True)
class Sweep:
    """Handoff sliders from ``start`` to ``stop`` (inclusive) every ``step`` points."""

    start: float
    stop: float
    step: float = 5

    def thresholds(self) -> list[float]:
        count = math.floor((self.stop - self.start) / self.step + 1e-9)
        return [round(self.start + i * self.step, 6) for i in range(count + 1)]


def parse_sweep(text: str) -> Sweep:
    """``A..B`` or ``A..B:STEP`` (percent; the step defaults to 5)."""
    span, _, step_text = text.partition(":")
    start_text, sep, stop_text = span.partition("..")
    if not sep:
        raise ConfigError(f"the sweep must look like 30..90 or 30..90:5, got {text!r}")
    start = _percent(start_text, "the sweep start")
    stop = _percent(stop_text, "the sweep end")
    if stop < start:
        raise ConfigError(f"the sweep end must not be below its start, got {text!r}")
    step = 5.0
    if step_text:
        try:
            step = float(step_text)
        except ValueError:
            raise ConfigError(f"the sweep step must be a number, got {step_text!r}") from None
        if not math.isfinite(step) or step <= 0:
            raise ConfigError(f"the sweep step must be above 0, got {step_text!r}")
    return Sweep(start, stop, step)
