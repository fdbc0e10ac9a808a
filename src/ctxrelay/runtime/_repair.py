"""Finishing what a torn history from an older version left half done.

Older versions could leave two kinds of torn state that the current store's one-commit
rollover cannot produce: an open window holding a ``boundary`` row (appended without the
seal), and a sealed window whose successor has no rows (sealed without its opening).
Each is finished once, never with a second rollover.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ctxrelay.runtime.windows import lead_in_row, trigger_row
from ctxrelay.store import NewRow, Row, SealReason, WindowInfo

__all__ = ["boundary_reason", "missing_opening"]

_BOUNDARY_REASONS: tuple[SealReason, ...] = ("new_context", "forced", "emergency")


def boundary_reason(boundary: Row) -> SealReason:
    """The seal reason a torn boundary row names (``forced`` when it names none)."""
    raw = boundary.metadata.get("reason")
    return next((r for r in _BOUNDARY_REASONS if r == raw), "forced")


def missing_opening(
    windows: Sequence[WindowInfo],
    window_index: int,
    *,
    workspace: Path,
    notes_file: str,
    history_available: bool,
    usable_limit: int,
) -> list[NewRow]:
    """The rows that open window ``window_index`` when its predecessor was sealed without
    them: the lead-in and a continuation, or only a lead-in that carries nothing after a
    manual reset (the privacy floor)."""
    prev = next((w for w in windows if w.index == window_index - 1), None)
    reset = prev is not None and prev.seal_reason == "manual_reset"
    lead = lead_in_row(
        window_index=window_index,
        previous_window_id=prev.id if prev else None,
        previous_seal_reason=prev.seal_reason if prev else None,
        workspace=workspace,
        notes_file=notes_file,
        history_available=history_available,
        carry_notes=not reset,
    )
    if reset:
        return [lead]
    trigger = trigger_row(
        str(prev.seal_reason if prev else "forced"),
        sealed_index=window_index - 1,
        usable_limit=usable_limit,
        unseen=(),
    )
    return [lead, trigger]
