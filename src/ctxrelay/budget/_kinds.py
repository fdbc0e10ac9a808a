"""Kinds of main-session handoff triggers (re-exported by :mod:`ctxrelay.budget.triggers`).

A module of its own because ``enum`` is expensive to import and the subagent hook, which
imports ``triggers`` at every tool call, never needs it.
"""

from __future__ import annotations

from ctxrelay.budget._choices import StrEnum

__all__ = ["MainTrigger"]


class MainTrigger(StrEnum):
    """Kinds of main-session handoff triggers; each hints once per episode."""

    CONTEXT = "context"
    TASK_DONE = "task_done"
