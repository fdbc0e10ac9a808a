"""Rows to provider messages, and the rows that open a window.

A window's rows render to an alternating conversation: ``user``, ``lead_in``,
``warning`` and legacy ``flush`` rows are user text; an ``assistant`` row and the
``tool_call`` rows after it are one assistant message; ``tool_result`` rows are tool
results in the next user message (results first, in call order, then text, as the
Anthropic API requires). ``boundary`` rows close a sealed window and are not sent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from ctxrelay.runtime.estimate import message_bytes
from ctxrelay.runtime.model import Message, TextBlock, ToolCall, ToolResultBlock
from ctxrelay.runtime.tools.files import NOTES_MAX_BYTES, WorkspaceError, resolve_in_workspace
from ctxrelay.store import NewRow, Row

__all__ = [
    "WindowView",
    "lead_in_row",
    "read_notes",
    "render_rows",
    "render_with_starts",
    "trigger_row",
    "unseen_rows",
]

_TEXT_KINDS = frozenset({"user", "lead_in", "warning", "flush"})


def _lead_in_header(row: Row) -> str:
    meta = row.metadata
    index = meta.get("window_index", "?")
    head = f"[ctxrelay] This is context window {index} (id {row.window_id}) of this session."
    prev = meta.get("previous_window_id")
    if prev:
        head += f" The previous window was {prev} (sealed: {meta.get('previous_seal_reason')})."
    return head


def render_rows(rows: Sequence[Row]) -> list[Message]:
    """The messages of a window, in order."""
    return [message for message, _ in render_with_starts(rows)]


def render_with_starts(rows: Sequence[Row]) -> list[tuple[Message, int]]:
    """The messages of ``rows`` with the index of the first row of each."""
    messages: list[tuple[Message, int]] = []
    results: list[tuple[int, ToolResultBlock]] = []
    texts: list[TextBlock] = []
    order: dict[str, int] = {}
    asst_text: str | None = None
    calls: list[ToolCall] = []
    in_assistant = False
    user_start = -1
    asst_start = -1

    def flush_user() -> None:
        if results or texts:
            blocks = [b for _, b in sorted(results, key=lambda item: item[0])]
            messages.append((Message("user", (*blocks, *texts)), user_start))
            results.clear()
            texts.clear()

    def flush_assistant() -> None:
        nonlocal in_assistant, asst_text
        if in_assistant:
            content = (TextBlock(asst_text),) if asst_text else ()
            messages.append((Message("assistant", content, tuple(calls)), asst_start))
            calls.clear()
            asst_text = None
            in_assistant = False

    for i, row in enumerate(rows):
        kind = row.kind
        if kind == "assistant":
            flush_user()
            flush_assistant()
            in_assistant = True
            asst_start = i
            asst_text = row.text or ""
            order = {}
        elif kind == "tool_call":
            if not in_assistant:  # a torn history: a call without its response row
                flush_user()
                in_assistant = True
                asst_start = i
                asst_text = ""
            call_id = str(row.metadata.get("id", f"row{row.id}"))
            args = row.metadata.get("input")
            if not isinstance(args, dict):
                args = {}
            order[call_id] = len(calls)
            calls.append(ToolCall(call_id, str(row.metadata.get("name", "?")), args))
        elif kind == "tool_result" or kind in _TEXT_KINDS:
            flush_assistant()
            if not results and not texts:
                user_start = i
            if kind == "tool_result":
                call_id = str(row.metadata.get("tool_call_id", ""))
                block = ToolResultBlock(call_id, row.text or "", bool(row.metadata.get("is_error")))
                results.append((order.get(call_id, len(order) + len(results)), block))
            else:
                text = row.text or ""
                if kind == "lead_in":
                    text = f"{_lead_in_header(row)}\n{text}"
                texts.append(TextBlock(text))
        # boundary rows are not sent
    flush_assistant()
    flush_user()
    return messages


class WindowView:
    """The open window's rows as this process appended or read them, indexed and
    rendered incrementally.

    Only the process holding the session's dispatch lock writes the window, so these
    rows are exactly the durable ones. Rows are append-only, so every message but the
    newest is final: it is rendered and measured once (the newest assistant message is
    re-rendered with the results that follow it, whose order depends on its calls).
    """

    def __init__(self, rows: Sequence[Row] = ()) -> None:
        self.rows: list[Row] = []
        self.last_assistant = -1
        self.flush_at: int | None = None
        self.boundary: Row | None = None
        self.max_context = 0
        self.claims: set[str] = set()
        self._stable: list[Message] = []
        self._stable_bytes = 0
        self._stable_rows = 0
        self.extend(rows)

    def extend(self, rows: Sequence[Row]) -> None:
        for row in rows:
            i = len(self.rows)
            self.rows.append(row)
            kind = row.kind
            if kind == "assistant":
                self.last_assistant = i
                ctx = row.metadata.get("context_tokens")
                if isinstance(ctx, int) and ctx > self.max_context:
                    self.max_context = ctx
            elif kind == "warning":
                stage = row.metadata.get("stage")
                if isinstance(stage, str):
                    self.claims.add(stage)
            elif kind == "flush" and self.flush_at is None:
                self.flush_at = i
            elif kind == "boundary" and self.boundary is None:
                self.boundary = row

    def after_reply(self) -> list[Row]:
        """Rows after the last model response (tool calls, results, input, advisories)."""
        return self.rows[self.last_assistant + 1 :]

    def messages(self, *, without_pending_advisories: bool = False) -> tuple[list[Message], int]:
        """The window's messages and their total size in bytes (``message_bytes``).

        ``without_pending_advisories`` leaves out advisories published after the last
        model response: the request as it was before this dispatch's evaluation."""
        tail_rows: Sequence[Row] = self.rows[self._stable_rows :]
        if without_pending_advisories:
            cut = self.last_assistant + 1 - self._stable_rows
            tail_rows = [r for j, r in enumerate(tail_rows) if j < cut or r.kind != "warning"]
        tail = render_with_starts(tail_rows)
        keep = len(tail) - 1
        if keep >= 1 and tail[keep][0].role == "user" and tail[keep - 1][0].role == "assistant":
            keep -= 1
        if keep > 0 and not without_pending_advisories:
            for message, _ in tail[:keep]:
                self._stable.append(message)
                self._stable_bytes += message_bytes(message)
            self._stable_rows += tail[keep][1]
            tail = tail[keep:]
        messages = [*self._stable, *(m for m, _ in tail)]
        size = self._stable_bytes + sum(message_bytes(m) for m, _ in tail)
        return messages, size


def unseen_rows(rows: Sequence[Row]) -> list[Row]:
    """Rows after the window's last model response: input the model has not seen yet."""
    last = max((i for i, r in enumerate(rows) if r.kind == "assistant"), default=-1)
    return list(rows[last + 1 :])


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
    carry_cap: int,
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


def dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
