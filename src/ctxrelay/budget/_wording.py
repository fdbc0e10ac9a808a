"""The advisory texts and the row metadata that publishes them (``docs/policy.md``).

One place owns every word the policy puts in front of an agent, so the runtime, the
plugin and the docs cannot drift apart.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from ctxrelay.budget._policy import Budget, Capability, Stage

__all__ = [
    "DEFAULT_NOTES_FILE",
    "AdvisoryMetadata",
    "advisory_metadata",
    "advisory_text",
    "handoff_text",
    "warning_text",
]

DEFAULT_NOTES_FILE = "context-notes.md"

_PREFIX = "[ctxrelay]"


class AdvisoryMetadata(TypedDict):
    """Metadata of a ``warning`` row. ``handoff``/``handoffTokens`` are optional so that an
    older reader shows a handoff request as an ordinary warning."""

    kind: str
    stage: str
    tokens: int
    budgetTokens: int
    handoff: NotRequired[bool]
    handoffTokens: NotRequired[int]


def _target(budget: Budget) -> int:
    target = budget.handoff_target
    if target is None:
        raise ValueError("an Off budget has no advisories")
    return target


def warning_text(budget: Budget, tokens: int, *, notes_file: str = DEFAULT_NOTES_FILE) -> str:
    """The advance warning: how far the window is from the target; keep notes current."""
    target = _target(budget)
    left = max(target - tokens, 0)
    return (
        f"{_PREFIX} Context warning: this window holds about {tokens:,} tokens, "
        f"{left:,} tokens short of its handoff target of {target:,}. "
        f"Keep `{notes_file}` current (what is done, what is next, decisions, files "
        "touched) so that the handoff is quick when it is requested."
    )


def handoff_text(
    budget: Budget,
    tokens: int,
    capability: Capability = Capability.FULL,
    *,
    notes_file: str = DEFAULT_NOTES_FILE,
    history_available: bool = True,
) -> str:
    """The handoff request, worded for what the agent can actually do."""
    target = _target(budget)
    usable = budget.usable_limit
    head = (
        f"{_PREFIX} Context handoff requested: this window holds about {tokens:,} tokens, "
        f"at or past its handoff target of {target:,} (the hard limit is {usable:,}). "
        "Finish the current small unit of work, then checkpoint your notes in "
        f"`{notes_file}` (goal, what is done, what is next, decisions, files touched) "
        "and confirm the write."
    )
    history = (
        " The old transcript stays retrievable with `session_history`."
        if history_available
        else " The old transcript will not be retrievable, so put everything needed in the notes."
    )
    done = " If the task is already complete, finish your reply instead."
    if capability is Capability.DEGRADED or not history_available:
        return (
            f"{head} Checkpoint the notes even though you cannot start a fresh window "
            f"yourself: this window will roll over when it reaches {usable:,} tokens, and "
            f"the next one starts from the notes.{history}{done}"
        )
    if capability is Capability.CONDITIONAL:
        return (
            f"{head} Then, in a later step, if the `new_context` tool is available to you, "
            "call it to continue in a fresh window seeded with the notes; if it is not, "
            f"keep working and the window will roll over at the hard limit.{history}{done}"
        )
    return (
        f"{head} Then, in a later step, call `new_context` to continue in a fresh window "
        f"seeded with the notes.{history}{done}"
    )


def advisory_text(
    budget: Budget,
    stage: Stage,
    tokens: int,
    capability: Capability = Capability.FULL,
    *,
    notes_file: str = DEFAULT_NOTES_FILE,
    history_available: bool = True,
) -> str:
    """The text of the advisory for ``stage``."""
    if stage is Stage.WARNING:
        return warning_text(budget, tokens, notes_file=notes_file)
    return handoff_text(
        budget, tokens, capability, notes_file=notes_file, history_available=history_available
    )


def advisory_metadata(budget: Budget, stage: Stage, tokens: int) -> AdvisoryMetadata:
    """The metadata of the ``warning`` row that publishes (and claims) ``stage``."""
    meta = AdvisoryMetadata(
        kind="warning", stage=stage.value, tokens=tokens, budgetTokens=budget.usable_limit
    )
    if stage is Stage.HANDOFF:
        meta["handoff"] = True
        meta["handoffTokens"] = _target(budget)
    return meta
