"""What the loop reports while it runs: typed events, their JSON lines, the sink seam.

``ctxrelay run --json`` and ``ctxrelay demo --json`` print ``to_json()`` of every event,
one object per line (``docs/contracts.md``): each dispatch is
``{"event": "dispatch", "window", "tokens", "decision", "stage"}`` and the last line is
``{"event": "end", "session_id", "status"}``. A handoff request is reported through the
``warn`` decision with ``stage: "handoff"``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from ctxrelay.budget import Budget

__all__ = [
    "RESUMED_AFTER_STOP",
    "AdvisoryEvent",
    "DispatchEvent",
    "EndEvent",
    "Event",
    "EventSink",
    "NoticeEvent",
    "PauseEvent",
    "ResponseEvent",
    "RolloverEvent",
    "StartEvent",
    "ToolEvent",
]


@dataclass(frozen=True, slots=True)
class Event:
    """Base of every event; ``kind`` is the ``event`` key of its JSON line."""

    kind: ClassVar[str] = "event"

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class StartEvent(Event):
    kind: ClassVar[str] = "start"
    session_id: str
    window: int
    resumed: bool
    usable_limit: int
    handoff_target: int | None
    warning_at: int | None
    model: str

    @classmethod
    def under(
        cls, session_id: str, window: int, resumed: bool, budget: Budget, model: str
    ) -> StartEvent:
        """The start of a run of ``session_id`` in ``window`` under ``budget``."""
        return cls(
            session_id,
            window,
            resumed,
            budget.usable_limit,
            budget.handoff_target,
            budget.warning_at,
            model,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.kind,
            "session_id": self.session_id,
            "window": self.window,
            "resumed": self.resumed,
            "usable_limit": self.usable_limit,
            "handoff_target": self.handoff_target,
            "warning_at": self.warning_at,
            "model": self.model,
        }


@dataclass(frozen=True, slots=True)
class DispatchEvent(Event):
    """One dispatch-time evaluation. A ``rollover`` reports the window it seals."""

    kind: ClassVar[str] = "dispatch"
    window: int
    tokens: int
    decision: str
    stage: str | None
    skipped: str | None = None
    reason: str | None = None
    """For a rollover: ``forced`` or ``emergency``. For a block: ``too_large`` when not
    even a fresh window would hold the request (nothing is sent, nothing is sealed);
    none when the policy is Off and the request is over the usable limit."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "event": self.kind,
            "window": self.window,
            "tokens": self.tokens,
            "decision": self.decision,
            "stage": self.stage,
        }
        if self.skipped is not None:
            out["skipped"] = self.skipped
        if self.reason is not None:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True, slots=True)
class AdvisoryEvent(Event):
    kind: ClassVar[str] = "advisory"
    window: int
    stage: str
    tokens: int
    text: str

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.kind,
            "window": self.window,
            "stage": self.stage,
            "handoff": self.stage == "handoff",
            "tokens": self.tokens,
        }


@dataclass(frozen=True, slots=True)
class ResponseEvent(Event):
    kind: ClassVar[str] = "response"
    window: int
    text: str
    tool_calls: Sequence[str]
    context_tokens: int
    output_tokens: int
    cost_usd: float
    session_cost_usd: float

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.kind,
            "window": self.window,
            "text": self.text,
            "tool_calls": list(self.tool_calls),
            "context_tokens": self.context_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "session_cost_usd": self.session_cost_usd,
        }


@dataclass(frozen=True, slots=True)
class ToolEvent(Event):
    kind: ClassVar[str] = "tool"
    window: int
    name: str
    call_id: str
    is_error: bool
    summary: str
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.kind,
            "window": self.window,
            "name": self.name,
            "call_id": self.call_id,
            "is_error": self.is_error,
            "summary": self.summary,
        }


@dataclass(frozen=True, slots=True)
class RolloverEvent(Event):
    kind: ClassVar[str] = "rollover"
    from_window: int
    to_window: int
    reason: str
    notes_bytes: int | None

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.kind,
            "from_window": self.from_window,
            "to_window": self.to_window,
            "reason": self.reason,
            "notes_bytes": self.notes_bytes,
        }


RESUMED_AFTER_STOP = "resumed_after_stop"
"""The notice of a run after one the user stopped: how that one left its step. It informs;
every other notice warns."""


@dataclass(frozen=True, slots=True)
class NoticeEvent(Event):
    """Something the user should know that changes nothing in the run, e.g. a cap that
    cannot be enforced (``code`` ``max_cost_unpriced``), or how a stopped run left its
    step (:data:`RESUMED_AFTER_STOP`)."""

    kind: ClassVar[str] = "notice"
    code: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class PauseEvent(Event):
    kind: ClassVar[str] = "pause"
    reason: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "reason": self.reason, "message": self.message}


@dataclass(frozen=True, slots=True)
class EndEvent(Event):
    kind: ClassVar[str] = "end"
    session_id: str
    status: str
    reason: str | None
    windows: int
    turns: int
    cost_usd: float

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.kind,
            "session_id": self.session_id,
            "status": self.status,
            "reason": self.reason,
            "windows": self.windows,
            "turns": self.turns,
            "cost_usd": self.cost_usd,
        }


EventSink = Callable[[Event], None]
"""Where events go: the CLI's JSON printer, a live display, a test's list.append."""
