"""A run the user stopped (Ctrl-C in ``ctxrelay run``, :meth:`Session.stop`): how it left
its last step, and what the next run says about it.

A stop is taken between steps, and a step is a model response with its tool calls: a
stop that arrives while a request is in flight lets the response arrive and its tool
calls run, then the run ends (``finished``). A second Ctrl-C cuts the step short instead:
a request in flight is dropped, and the next run sends it again (``request``); tool calls
still running are cancelled and answered as stopped by the user (``abandoned``), so the
model knows they may have taken effect in part. Neither is "interrupted by a restart",
which is the answer for calls a crash left without a result. The outcome is kept in the
session's metadata (:data:`STOP_KEY`) until the next run reports it.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxrelay.runtime._tools import Call, result_row
from ctxrelay.runtime.tools import ToolResult
from ctxrelay.store import NewRow, Row

__all__ = [
    "INPUT_KINDS",
    "STOP_KEY",
    "StepOutcome",
    "StoppedStep",
    "abandoned_text",
    "interrupted_step",
    "pending_calls",
    "stopped_step",
]

STOP_KEY = "stopped_step"
"""Session metadata key of how the last stopped run left its step (``None`` once reported)."""

INPUT_KINDS = frozenset({"user", "tool_result"})
"""Row kinds that are input to the model: once one follows the last response, a request
is due."""


class StepOutcome(enum.StrEnum):
    BETWEEN = "between"
    """Stopped with no tool call of the last response outstanding and nothing unsent."""
    FINISHED = "finished"
    """The last response's tool calls ran to their end, then the run stopped."""
    ABANDONED = "abandoned"
    """A second Ctrl-C cancelled tool calls that were running: answered as stopped."""
    REQUEST = "request"
    """A second Ctrl-C dropped the model request in flight: it is sent again."""


def abandoned_text(name: str) -> str:
    """The result of a call the user's second Ctrl-C cancelled while it ran."""
    return (
        f"{name} was stopped by the user (Ctrl-C) before it finished; check whether it "
        "took effect before calling it again"
    )


def pending_calls(after_reply: Sequence[Row]) -> list[Row]:
    """The ``tool_call`` rows among ``after_reply`` (the rows after the window's last
    response) that have no ``tool_result`` yet."""
    rows = after_reply
    answered = {str(r.metadata.get("tool_call_id")) for r in rows if r.kind == "tool_result"}
    return [r for r in rows if r.kind == "tool_call" and str(r.metadata.get("id")) not in answered]


@dataclass(frozen=True, slots=True)
class StoppedStep:
    """How a stopped run left its last step: the outcome and the tools it concerns."""

    outcome: StepOutcome
    calls: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"outcome": self.outcome.value, "calls": list(self.calls)}

    @classmethod
    def from_json(cls, raw: object) -> StoppedStep | None:
        if not isinstance(raw, Mapping):
            return None
        try:
            outcome = StepOutcome(str(raw.get("outcome")))
        except ValueError:
            return None
        calls = raw.get("calls")
        names = tuple(str(c) for c in calls) if isinstance(calls, list) else ()
        return cls(outcome, names)

    def sentence(self) -> str:
        """What the next run says, in one sentence."""
        names = ", ".join(self.calls)
        if self.outcome is StepOutcome.FINISHED:
            return (
                f"the last run was stopped by Ctrl-C after its step's tool calls had "
                f"finished ({names}); continuing from their results"
            )
        if self.outcome is StepOutcome.ABANDONED:
            return (
                f"the last run was stopped by a second Ctrl-C while tool calls ran; "
                f"abandoned: {names} (the model is told each may have taken effect in part)"
            )
        if self.outcome is StepOutcome.REQUEST:
            return (
                "the last run was stopped by a second Ctrl-C during a model request; "
                "the request is sent again"
            )
        return "the last run was stopped by Ctrl-C between steps; continuing"


def stopped_step(after_reply: Sequence[Row]) -> StoppedStep:
    """A clean stop: every call of the last response has its result (the stop waits for
    them), so the step finished, or there was none."""
    calls = tuple(str(r.metadata.get("name", "")) for r in after_reply if r.kind == "tool_call")
    return StoppedStep(StepOutcome.FINISHED if calls else StepOutcome.BETWEEN, calls)


def interrupted_step(after_reply: Sequence[Row]) -> tuple[StoppedStep, list[NewRow]]:
    """A stop that cut the step short: the answers for the calls it left running, and
    the outcome (a request in flight when no call was left and input awaits the model)."""
    pending = pending_calls(after_reply)
    if pending:
        calls = [Call.of(r) for r in pending]
        rows = [
            result_row(c, ToolResult(abandoned_text(c.name), True, {"abandoned": True}))
            for c in calls
        ]
        return StoppedStep(StepOutcome.ABANDONED, tuple(c.name for c in calls)), rows
    if any(r.kind in INPUT_KINDS for r in after_reply):
        return StoppedStep(StepOutcome.REQUEST), []
    return StoppedStep(StepOutcome.BETWEEN), []
