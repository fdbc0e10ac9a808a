"""Kinds of main-session handoff triggers (re-exported by :mod:`ctxrelay.budget.triggers`).

A module of its own so the subagent hook, which imports ``triggers`` at every tool call
and never needs it, does not load the enumeration base (``_choices``) with it.
"""

from __future__ import annotations

from ctxrelay.budget._choices import StrEnum

__all__ = ["MainTrigger"]


class MainTrigger(StrEnum):
    """Kinds of main-session handoff triggers; each hints once per episode."""

    CONTEXT = "context"
    TASK_DONE = "task_done"
