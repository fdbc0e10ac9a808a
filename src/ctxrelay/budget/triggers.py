"""Pure rules of the Claude Code plugin: when a subagent reports now, when the main
session hands off. Numbers in, decisions out; the hooks gather the numbers."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import NamedTuple

from ctxrelay.budget._policy import Budget
from ctxrelay.budget.bounds import (
    CONTEXT_PERCENT,
    DEFAULT_CONTEXT_WINDOW,
    HAIKU_CONTEXT_MAX,
    MAIN_OUTPUT_RESERVE,
    REPORT_MAX_WORDS,
    SUBAGENT_CONTEXT_MAX,
    TURNS_LEFT_AT,
)
from ctxrelay.budget.models import context_window, fit_reserve, is_haiku

__all__ = [
    "MainTrigger",
    "ReportNow",
    "completed_task_in",
    "context_bound_for",
    "context_window_for",
    "main_budget",
    "main_triggers",
    "report_now",
]


class MainTrigger(StrEnum):
    """Kinds of main-session handoff triggers; each hints once per episode."""

    CONTEXT = "context"
    TASK_DONE = "task_done"


def context_bound_for(model: str | None) -> int:
    """The report-now context bound of a subagent running ``model``
    (``ctxrelay.budget.models.is_haiku`` says which models get the smaller one)."""
    return HAIKU_CONTEXT_MAX if is_haiku(model) else SUBAGENT_CONTEXT_MAX


def context_window_for(model: str | None, configured: int | None = None) -> int:
    """The main session's window: a configured (or statusline-recorded) size wins, then
    the model table's window for the id (``…[1m]`` means the 1M window), then the 200k
    that Claude Code gives a model it does not know."""
    if configured is not None and configured > 0:
        return configured
    window = context_window(model)
    return DEFAULT_CONTEXT_WINDOW if window is None else window


class ReportNow(NamedTuple):
    """Why a subagent is told to report now, with the numbers that triggered it."""

    context_tokens: int
    context_bound: int
    turns_used: int
    max_turns: int | None
    over_context: bool
    few_turns: bool

    @property
    def turns_left(self) -> int | None:
        return None if self.max_turns is None else self.max_turns - self.turns_used

    def note(self) -> str:
        """The ``additionalContext`` note for the subagent."""
        reasons: list[str] = []
        if self.over_context:
            reasons.append(
                f"your context is {self.context_tokens:,} tokens, over the "
                f"{self.context_bound:,}-token bound for subagents"
            )
        if self.few_turns and self.max_turns is not None:
            reasons.append(
                f"you have used {self.turns_used} of your {self.max_turns} turns "
                f"({self.turns_left} left; the limit is {TURNS_LEFT_AT} or fewer)"
            )
        why = " and ".join(reasons)
        return (
            f"[ctxrelay] Report now: {why}. Commit the work you have (save files, note "
            "what is unfinished), then end with your final report to the parent agent "
            f"within {REPORT_MAX_WORDS} words: what you found or changed, where, and "
            "what is left. Do not start new work."
        )


def report_now(
    context_tokens: int,
    *,
    model: str | None,
    turns_used: int,
    max_turns: int | None,
) -> ReportNow | None:
    """The report-now rule: context over the model's bound, or ``TURNS_LEFT_AT`` or fewer
    turns left of ``max_turns``. ``None`` below both bounds (the hook adds nothing)."""
    bound = context_bound_for(model)
    over = context_tokens > bound
    few = max_turns is not None and max_turns - turns_used <= TURNS_LEFT_AT
    if not (over or few):
        return None
    return ReportNow(context_tokens, bound, turns_used, max_turns, over_context=over, few_turns=few)


def main_budget(window: int, threshold: float = CONTEXT_PERCENT) -> Budget:
    """The Claude Code main session's budget: the policy core's :class:`Budget` over
    ``window`` with the slider ``threshold`` (decimals, the 10% floor and 100 = Off are
    the core's rules) and :data:`MAIN_OUTPUT_RESERVE` kept free (a small window keeps
    less: :func:`ctxrelay.budget.models.fit_reserve`). Its ``handoff_target`` is where the
    plugin hints or hands off, its ``usable_limit`` where tool calls are denied."""
    reserve = fit_reserve(MAIN_OUTPUT_RESERVE, window)
    return Budget(limit=window, output_reserve=reserve, threshold=threshold)


def main_triggers(
    context_tokens: int, target: int | None, *, task_completed: bool
) -> frozenset[MainTrigger]:
    """The triggers that fire at the end of a main-session turn: the context at or past
    ``target`` (:func:`main_budget`'s ``handoff_target``; ``None`` when the slider is Off),
    and a task marked completed."""
    fired: set[MainTrigger] = set()
    if target is not None and context_tokens >= target:
        fired.add(MainTrigger.CONTEXT)
    if task_completed:
        fired.add(MainTrigger.TASK_DONE)
    return frozenset(fired)


def completed_task_in(tool_calls: Iterable[tuple[str, object]]) -> bool:
    """Whether any ``(tool name, input)`` of a turn marked a task completed
    (``TaskUpdate`` in current Claude Code, ``TodoWrite`` in older versions).

    ``TodoWrite`` sends the whole list each time, so a list that still holds an item
    completed earlier counts again; the host hints once per kind of trigger per episode,
    which absorbs the repeat."""
    for name, payload in tool_calls:
        if not isinstance(payload, dict):
            continue
        if name == "TaskUpdate" and payload.get("status") == "completed":
            return True
        if name == "TodoWrite":
            todos = payload.get("todos")
            if isinstance(todos, list) and any(
                isinstance(t, dict) and t.get("status") == "completed" for t in todos
            ):
                return True
    return False
