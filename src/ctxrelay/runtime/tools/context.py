"""``new_context`` and ``session_history``: the agent's side of the handoff.

``new_context`` only marks its result (``metadata={"new_context": True}``); the loop seals
the window from that durable row once the sibling calls of the same batch have settled,
so a restart between the call and the seal still seals exactly once. ``session_history``
reads this session's earlier windows through the store's bounded, scoped,
privacy-floored queries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ctxrelay.errors import StoreError
from ctxrelay.runtime.tools._base import ToolContext, ToolResult, object_schema, string
from ctxrelay.store import HISTORY_RESULT_MAX_BYTES, HISTORY_ROWS_MAX, Row

__all__ = ["NewContext", "SessionHistory", "format_row", "sealing_text"]

_ROW_PREVIEW_BYTES = 2_000
"""A row's text shown by ``read``/``search`` is cut here, so one huge row cannot take the
whole result; ``read`` with a narrower range shows the rest of the window."""


@dataclass(frozen=True, slots=True)
class NewContext:
    """Seal this window and continue in a fresh one seeded with the notes."""

    name: str = "new_context"
    description: str = (
        "Continue in a fresh context window. Call it only after your notes checkpoint is "
        "written and confirmed, in a later step than the write. The fresh window starts "
        "with its id, the previous window's id, your notes file and how to use "
        "session_history; it has no summary. The window is sealed once the other tool "
        "calls of this step have finished."
    )
    replay_safe: bool = True

    @property
    def input_schema(self) -> Mapping[str, Any]:
        return object_schema({})

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(sealing_text(ctx.window_index), metadata={"new_context": True})


def sealing_text(window_index: int) -> str:
    """``new_context``'s answer when it succeeded in window ``window_index`` (also the
    answer an integration records for a call whose outcome was kept but whose result a
    crash lost)."""
    return (
        f"window {window_index} will be sealed once the other tool calls of this step "
        f"have finished; you continue in window {window_index + 1}"
    )


def _cut(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore") + f" …[{len(data) - limit:,} bytes more]"


def format_row(row: Row, *, preview: int = _ROW_PREVIEW_BYTES) -> str:
    """One row as the agent sees it in ``session_history`` results."""
    meta = row.metadata
    if row.kind == "tool_call":
        head = f"tool_call {meta.get('name', '?')} (id {meta.get('id', '?')})"
    elif row.kind == "tool_result":
        err = " ERROR" if meta.get("is_error") else ""
        head = f"tool_result{err} (for {meta.get('tool_call_id', '?')})"
    elif row.kind == "warning" and meta.get("handoff"):
        head = "warning (handoff request)"
    else:
        head = row.kind
    body = _cut(row.text or "", preview)
    return f"[seq {row.seq}] {head}: {body}"


class _Budgeted:
    """Collects lines until the result cap (16 KiB) would be passed."""

    def __init__(self, limit: int = HISTORY_RESULT_MAX_BYTES) -> None:
        self.limit = limit - 200  # room for the closing note
        self.lines: list[str] = []
        self.size = 0
        self.full = False

    def add(self, line: str) -> bool:
        size = len(line.encode("utf-8")) + 1
        if self.size + size > self.limit:
            self.full = True
            return False
        self.lines.append(line)
        self.size += size
        return True

    def text(self, more: str) -> str:
        if self.full:
            self.lines.append(more)
        return "\n".join(self.lines)


def _int(args: Mapping[str, Any], key: str, default: int | None) -> int | None:
    value = args.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{key} must be a whole number")
    return value


@dataclass(frozen=True, slots=True)
class SessionHistory:
    """List, search and read this session's earlier windows."""

    name: str = "session_history"
    description: str = (
        "Recover details from this session's earlier context windows (they are not in "
        "your context). action=list: the windows. action=search with query: rows of "
        "earlier windows whose text contains it, newest first. action=read with window "
        "(its index), offset and limit: rows of that window in order. Results are capped at "
        f"{HISTORY_RESULT_MAX_BYTES // 1024} KiB and {HISTORY_ROWS_MAX} rows."
    )
    replay_safe: bool = True

    @property
    def input_schema(self) -> Mapping[str, Any]:
        return object_schema(
            {
                "action": {"type": "string", "enum": ["list", "search", "read"]},
                "query": string("text to find (search)"),
                "window": {"type": "integer", "description": "window index (read)"},
                "offset": {"type": "integer", "description": "first row, 0-based (read)"},
                "limit": {"type": "integer", "description": "rows to return"},
            },
            "action",
        )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        action = args.get("action")
        try:
            if action == "list":
                return self._list(ctx)
            if action == "search":
                return self._search(args, ctx)
            if action == "read":
                return self._read(args, ctx)
        except ValueError as exc:
            return ToolResult(f"session_history: {exc}", is_error=True)
        except StoreError as exc:
            return ToolResult(f"session_history: the store failed: {exc}", is_error=True)
        return ToolResult(
            "session_history: action must be one of list, search, read", is_error=True
        )

    def _list(self, ctx: ToolContext) -> ToolResult:
        windows = ctx.store.history_windows(ctx.session_id)
        out = _Budgeted()
        for w in windows:
            state = f"sealed ({w.seal_reason})" if w.seal_reason else "open"
            here = " — this window" if w.id == ctx.window_id else ""
            if not out.add(f"window {w.index} (id {w.id}): {state}{here}"):
                break
        if not windows:
            return ToolResult("no windows are visible")
        return ToolResult(out.text("[more windows not shown]"), metadata={"windows": len(windows)})

    def _search(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ValueError("search needs a non-empty query")
        limit = _int(args, "limit", 20) or 20
        limit = max(1, min(limit, HISTORY_ROWS_MAX))
        # The open window is already in the caller's context (and holds this very
        # call, whose input matches the query): search the earlier windows only.
        hits = [
            hit
            for hit in ctx.store.history_search(ctx.session_id, query, limit=limit + 50)
            if hit.window_index != ctx.window_index
        ][:limit]
        if not hits:
            return ToolResult(f"no rows of earlier windows contain {query!r}", metadata={"hits": 0})
        out = _Budgeted()
        for hit in hits:
            if not out.add(f"window {hit.window_index} {format_row(hit.row, preview=600)}"):
                break
        return ToolResult(
            out.text("[more hits not shown: narrow the query]"), metadata={"hits": len(hits)}
        )

    def _read(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        window = _int(args, "window", None)
        if window is None:
            raise ValueError("read needs window (an index from action=list)")
        offset = _int(args, "offset", 0) or 0
        limit = _int(args, "limit", 50) or 50
        if offset < 0:
            raise ValueError("offset must be zero or more")
        limit = max(1, min(limit, HISTORY_ROWS_MAX))
        rows = ctx.store.history_read(ctx.session_id, window, offset=offset, limit=limit)
        if not rows:
            return ToolResult(f"window {window} has no rows from offset {offset}")
        out = _Budgeted()
        shown = 0
        for row in rows:
            if not out.add(format_row(row)):
                break
            shown += 1
        more = f"[result cap reached: continue with offset {offset + shown}]"
        return ToolResult(out.text(more), metadata={"rows": shown, "window": window})
