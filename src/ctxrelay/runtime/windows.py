"""Opening and sealing windows, and publishing advisories: the store side of a handoff.

The loop and the framework integrations call these, so a window is sealed, a lead-in
worded and an advisory claimed the same way whichever host runs the agent:

- :func:`publish_advisory`: the ``warning`` row of a :class:`~ctxrelay.runtime.plan.
  DispatchPlan` and its ``(window, stage)`` claim, in one transaction, before the request.
- :func:`window_opening`: the lead-in (window ids, the notes file cut at 8 KiB, how to
  use ``session_history``; no summary) and the triggering message (why the window
  changed, and the input the model had not seen yet) of the window a rollover opens.
- :func:`seal_window`: the boundary row, the seal and the next window's opening rows, in
  one transaction (``Store.rollover``).
- :func:`lead_in_text`: a lead-in row as the model reads it (its id header, then its text).
- :func:`reset_session`: the manual reset (the privacy floor).
- :func:`window_state`: the open window and what :func:`~ctxrelay.runtime.plan.
  plan_dispatch` needs of it, read from the store.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ctxrelay.budget import DEFAULT_NOTES_FILE
from ctxrelay.errors import RequestTooLargeError
from ctxrelay.runtime.plan import WindowState
from ctxrelay.runtime.tools.files import NOTES_MAX_BYTES, WorkspaceError, resolve_in_workspace
from ctxrelay.store import NewRow, Row, SealReason, Store, WindowInfo

if TYPE_CHECKING:
    from ctxrelay.runtime.plan import DispatchPlan

__all__ = [
    "CARRY_MAX_BYTES",
    "NOTES_MAX_BYTES",
    "lead_in_row",
    "lead_in_text",
    "publish_advisory",
    "read_notes",
    "reset_session",
    "seal_window",
    "trigger_row",
    "window_opening",
    "window_state",
]

CARRY_MAX_BYTES = 64 * 1024
"""Bytes of one unseen row carried into the next window's triggering message."""


def _lead_in_header(row: Row) -> str:
    meta = row.metadata
    index = meta.get("window_index", "?")
    head = f"[ctxrelay] This is context window {index} (id {row.window_id}) of this session."
    prev = meta.get("previous_window_id")
    if prev:
        head += f" The previous window was {prev} (sealed: {meta.get('previous_seal_reason')})."
    return head


def read_notes(workspace: Path, notes_file: str) -> tuple[str | None, int]:
    """The notes file's text (cut at 8 KiB on a character boundary) and its full size;
    ``(None, 0)`` when it is absent or unreadable."""
    try:
        path = resolve_in_workspace(workspace, notes_file)
        with path.open("rb") as handle:
            data = handle.read(NOTES_MAX_BYTES + 1)
            size = path.stat().st_size
    except (OSError, WorkspaceError):
        return None, 0
    return data[:NOTES_MAX_BYTES].decode("utf-8", errors="ignore"), size


def lead_in_row(
    *,
    window_index: int,
    previous_window_id: str | None,
    previous_seal_reason: str | None,
    workspace: Path,
    notes_file: str,
    history_available: bool,
    carry_notes: bool = True,
) -> NewRow:
    """The provider-visible opening of a new window: ids (the header is rendered from
    the row's metadata and window id), the notes if present (cap 8 KiB), and how to use
    ``session_history``. No summary."""
    parts: list[str] = []
    notes, size = read_notes(workspace, notes_file) if carry_notes else (None, 0)
    if not carry_notes:
        parts.append(
            "The session was reset by the user: earlier windows are not available and "
            "their notes are not carried."
        )
    elif notes is None:
        parts.append(f"There is no notes file `{notes_file}` in the workspace.")
    else:
        cut = size > NOTES_MAX_BYTES
        note = f" (first {NOTES_MAX_BYTES:,} of {size:,} bytes)" if cut else ""
        parts.append(f"Your notes from `{notes_file}`{note}:\n<notes>\n{notes}\n</notes>")
    if carry_notes:
        if history_available:
            parts.append(
                "Earlier windows are not in this context. To recover a detail, call "
                '`session_history` with action "list" (windows), "search" with a query '
                '(rows containing it), or "read" with window, offset and limit (rows of '
                "one window). Keep the notes file current as you work."
            )
        else:
            parts.append(
                "Earlier windows are not in this context and cannot be recovered: the "
                "notes are all that was carried over."
            )
    return NewRow(
        "lead_in",
        text="\n\n".join(parts),
        metadata={
            "window_index": window_index,
            "previous_window_id": previous_window_id,
            "previous_seal_reason": previous_seal_reason,
            "notes_file": notes_file,
            "notes_bytes": size if notes is not None else None,
        },
    )


def _describe(row: Row, cap: int) -> str:
    meta = row.metadata
    text = row.text or ""
    if len(text.encode("utf-8")) > cap:
        text = text.encode("utf-8")[:cap].decode("utf-8", errors="ignore") + " …[cut]"
    if row.kind == "tool_result":
        err = " (error)" if meta.get("is_error") else ""
        return (
            f"- result of {meta.get('name', 'a tool')} ({meta.get('tool_call_id')}){err}:\n{text}"
        )
    return f"- {row.kind}: {text}"


def trigger_row(
    reason: str,
    *,
    sealed_index: int,
    usable_limit: int,
    unseen: Sequence[Row],
    carry_cap: int = CARRY_MAX_BYTES,
) -> NewRow:
    """The message that starts work in the new window: why the window changed and the
    input the model had not seen yet (tool results, user messages)."""
    if reason == "new_context":
        head = (
            f"[ctxrelay] Window {sealed_index} was sealed by your new_context call. "
            "Continue the task from your notes above."
        )
    elif reason == "legacy_flush":
        head = (
            f"[ctxrelay] Window {sealed_index} was sealed after its final flush step. "
            "Continue the task from your notes above."
        )
    else:
        head = (
            f"[ctxrelay] Window {sealed_index} reached the usable limit of "
            f"{usable_limit:,} tokens and was rolled over ({reason}). Continue the task "
            "from your notes above; recover anything else with session_history."
        )
    carried = [
        r
        for r in unseen
        if r.kind == "user" or (r.kind == "tool_result" and not r.metadata.get("new_context"))
    ]
    body = ""
    if carried:
        label = "the other tool calls of that step" if reason == "new_context" else "your last step"
        body = f"\n\nInput from {label} that you have not seen yet:\n" + "\n".join(
            _describe(r, carry_cap) for r in carried
        )
    return NewRow(
        "user",
        text=head + body,
        metadata={
            "trigger": reason,
            "carried_rows": [r.seq for r in carried],
        },
    )


def lead_in_text(row: Row) -> str:
    """A ``lead_in`` row as the model reads it: the header naming this window's index and
    id (and the previous window's id and seal reason), then the row's text."""
    return f"{_lead_in_header(row)}\n{row.text or ''}"


def window_state(store: Store, session_id: str) -> tuple[WindowInfo, WindowState]:
    """The session's open window and its :class:`~ctxrelay.runtime.plan.WindowState`,
    read from the store: the stages claimed in it, and the largest request of it that
    the provider counted (the ``context_tokens`` of its ``assistant`` rows)."""
    window = store.current_window(session_id)
    largest = 0
    for row in store.rows(session_id, window_id=window.id):
        if row.kind == "assistant":
            ctx = row.metadata.get("context_tokens")
            if isinstance(ctx, int) and ctx > largest:
                largest = ctx
    state = WindowState(window.id, window.index, store.claims(window.id), largest)
    return window, state


def publish_advisory(
    store: Store, session_id: str, window_id: str, plan: DispatchPlan
) -> Row | None:
    """Publish the plan's advisory: claim ``(window, stage)`` and append its ``warning``
    row in one transaction, before the request that carries it is sent.

    ``None`` when the plan has no advisory, or the stage was already claimed in this
    window (another attempt published it): nothing is appended, the advisory exists once."""
    row = plan.advisory
    stage = plan.stage
    if row is None or stage is None:
        return None
    return store.append_advisory(session_id, window_id, stage.value, row)


def window_opening(
    window: WindowInfo,
    reason: SealReason,
    *,
    workspace: Path,
    notes_file: str,
    history_available: bool,
    usable_limit: int,
    unseen: Sequence[Row] = (),
    measure: Callable[[tuple[NewRow, NewRow]], int] | None = None,
) -> tuple[NewRow, NewRow]:
    """The lead-in and the triggering message of the window that sealing ``window`` with
    ``reason`` opens. ``unseen`` are the sealed window's rows after its last model
    response (see ``unseen_rows``): the user messages and tool results among them are
    carried (each cut at ``CARRY_MAX_BYTES``), except the ``new_context`` result itself.

    ``measure`` is the host's estimate, in tokens, of the first request of the fresh
    window these two rows open: when even that is over ``usable_limit``,
    :class:`~ctxrelay.errors.RequestTooLargeError` is raised before anything is sealed
    (the host pauses or blocks instead)."""
    lead = lead_in_row(
        window_index=window.index + 1,
        previous_window_id=window.id,
        previous_seal_reason=reason,
        workspace=workspace,
        notes_file=notes_file,
        history_available=history_available,
    )
    trigger = trigger_row(
        reason,
        sealed_index=window.index,
        usable_limit=usable_limit,
        unseen=unseen,
    )
    if measure is not None and (needed := measure((lead, trigger))) > usable_limit:
        raise RequestTooLargeError(needed, usable_limit)
    return lead, trigger


def seal_window(
    store: Store,
    session_id: str,
    window: WindowInfo,
    reason: SealReason,
    *,
    opening: Sequence[NewRow],
    usable_limit: int,
) -> WindowInfo:
    """Seal the open ``window`` with ``reason`` and open the next with ``opening`` (from
    :func:`window_opening`), in one transaction: the boundary row, the seal, the new
    window and its rows commit together or not at all. Raises ``StaleWindowError`` when
    ``window`` is no longer the open one (another worker sealed it first)."""
    boundary = NewRow(
        "boundary",
        f"window {window.index} sealed ({reason})",
        {"reason": reason, "budgetTokens": usable_limit},
    )
    return store.rollover(session_id, window.id, reason, boundary=boundary, opening=opening)


def reset_session(store: Store, session_id: str, *, history_available: bool = True) -> WindowInfo:
    """Manual reset: seal the open window ``manual_reset`` and open a fresh one whose
    lead-in carries nothing from before (the privacy floor: ``session_history`` never
    returns rows before it)."""
    info = store.get_session(session_id)
    raw = info.metadata.get("config")
    notes_file = DEFAULT_NOTES_FILE
    workspace = Path(".")
    if isinstance(raw, Mapping):
        notes_file = str(raw.get("notes_file", notes_file))
        workspace = Path(str(raw.get("workspace", ".")))
    current = store.current_window(session_id)
    lead = lead_in_row(
        window_index=current.index + 1,
        previous_window_id=None,
        previous_seal_reason="manual_reset",
        workspace=workspace,
        notes_file=notes_file,
        history_available=history_available,
        carry_notes=False,
    )
    return store.reset(session_id, opening=[lead])
