"""A stored session for people (``ctxrelay sessions show``): a short header, then per
window a timeline of its rows, one line each, with the advisories and seals called out.

Every value is shown as a reader would write it (``6,200``, ``yes``, ``$0.0186``), never
as a Python repr; ``--verbose`` lists every metadata field under its row.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.text import Text

from ctxrelay.cli._readable import fields, show_value
from ctxrelay.cli._screen import one_line, print_line

if TYPE_CHECKING:
    from rich.console import Console

    from ctxrelay.store import Row, SessionInfo, WindowInfo

__all__ = ["RowLine", "row_line", "show_session", "when"]

SEALS = {
    "new_context": "sealed by new_context (the agent handed off)",
    "forced": "sealed by a forced rollover at the usable limit",
    "emergency": "sealed by an emergency rollover (the provider refused the request)",
    "manual_reset": "sealed by a manual reset (sessions reset)",
    "legacy_flush": "sealed after a final flush step",
}
"""Why a window was sealed, in words."""

_TITLE_SEALS = {
    "new_context": "sealed by new_context",
    "forced": "sealed by a forced rollover",
    "emergency": "sealed by an emergency rollover",
    "manual_reset": "sealed by a manual reset",
    "legacy_flush": "sealed after a flush step",
}

SHORT_SEALS = {
    "new_context": "handoff",
    "forced": "forced",
    "emergency": "emergency",
    "manual_reset": "reset",
    "legacy_flush": "flush",
}


def when(stamp: float | None, *, short: bool = False, day_of: float | None = None) -> str:
    """A stored time in the local zone: ``2026-12-01 07:23:01`` (``short``: to the minute,
    without the year when it is this year's; only ``07:23:01`` when it falls on the day
    of ``day_of``)."""
    if stamp is None:
        return ""
    moment = dt.datetime.fromtimestamp(stamp).astimezone()
    if day_of is not None and dt.datetime.fromtimestamp(day_of).astimezone().date() == (
        moment.date()
    ):
        return moment.strftime("%H:%M:%S")
    if not short:
        return moment.strftime("%Y-%m-%d %H:%M:%S")
    if moment.year == dt.datetime.now().astimezone().year:
        return moment.strftime("%m-%d %H:%M")
    return moment.strftime("%Y-%m-%d")


@dataclass(frozen=True, slots=True)
class RowLine:
    """One row of the timeline: what it is, its tokens and cost when known, one line of
    what it says; ``style`` marks advisories and seals."""

    seq: int
    label: str
    summary: str
    tokens: int | None = None
    cost_usd: float | None = None
    style: str = ""


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _arguments(value: Any) -> str:
    if not isinstance(value, Mapping):
        return show_value(value)
    parts = []
    long = [k for k, v in value.items() if isinstance(v, str) and ("\n" in v or len(v) > 40)]
    for key, arg in sorted(value.items(), key=lambda kv: kv[0] in long):
        if isinstance(arg, str) and ("\n" in arg or len(arg) > 40):
            parts.append(f"{key}=({len(arg):,} chars)")
        else:
            parts.append(f"{key}={one_line(show_value(arg), 40)}")
    return " ".join(parts)


def row_line(row: Row) -> RowLine:
    """The timeline line of ``row``."""
    meta = row.metadata
    text = row.text or ""
    kind = row.kind
    if kind == "user":
        if meta.get("task"):
            return RowLine(row.seq, "task", text)
        if meta.get("trigger"):
            carried = meta.get("carried_rows")
            note = f" ({len(carried)} rows carried over)" if isinstance(carried, list) else ""
            body = text.removeprefix("[ctxrelay] ")
            return RowLine(row.seq, "continue", body + note, style="magenta")
        return RowLine(row.seq, "user", text)
    if kind == "assistant":
        cost = meta.get("cost_usd")
        return RowLine(
            row.seq,
            "model",
            text or "(no text: tool calls only)",
            tokens=_int(meta.get("context_tokens")),
            cost_usd=cost
            if isinstance(cost, (int, float)) and not isinstance(cost, bool)
            else None,
        )
    if kind == "tool_call":
        name = str(meta.get("name", "a tool"))
        return RowLine(row.seq, "call", f"{name} {_arguments(meta.get('input'))}".strip())
    if kind == "tool_result":
        name = str(meta.get("name", "a tool"))
        if meta.get("notes"):
            size = _int(meta.get("bytes"))
            where = meta.get("path", "the notes file")
            shown = f"{size:,} bytes to {where}" if size is not None else str(where)
            return RowLine(row.seq, "notes", f"notes written: {shown}", style="green")
        if meta.get("new_context"):
            return RowLine(row.seq, "result", f"new_context: {text}", style="magenta")
        if meta.get("is_error"):
            return RowLine(row.seq, "error", f"{name}: {text}", style="red")
        return RowLine(row.seq, "result", f"{name}: {text}")
    if kind == "warning":
        tokens = _int(meta.get("tokens"))
        at = f" at {tokens:,} tokens" if tokens is not None else ""
        if meta.get("stage") == "handoff" or meta.get("handoff"):
            return RowLine(row.seq, "handoff", f"handoff requested{at}", tokens, style="yellow")
        return RowLine(row.seq, "warning", f"advance warning{at}", tokens, style="yellow")
    if kind == "boundary":
        reason = str(meta.get("reason", ""))
        return RowLine(row.seq, "sealed", SEALS.get(reason, text or reason), style="magenta")
    if kind == "lead_in":
        size = _int(meta.get("notes_bytes"))
        notes = "no notes"
        if size is not None:
            notes = f"notes {size:,} bytes from {meta.get('notes_file', 'the notes file')}"
        sealed = meta.get("previous_seal_reason")
        after = f" (after {SHORT_SEALS.get(str(sealed), sealed)})" if sealed else ""
        return RowLine(row.seq, "lead-in", f"{notes}{after}", style="magenta")
    return RowLine(row.seq, kind, text)


def _costed(rows: Iterable[RowLine]) -> bool:
    return any(r.cost_usd for r in rows)


def _render(line: RowLine, *, costs: bool, width: int) -> str:
    tokens = f"{line.tokens:,}" if line.tokens is not None else ""
    head = f"{line.seq:>5}  {line.label:<8} {tokens:>8}"
    if costs:
        head += f" {'' if line.cost_usd is None else f'${line.cost_usd:.4f}':>8}"
    summary = one_line(line.summary, width - len(head) - 2)
    body = f"{escape(head)}  {escape(summary)}"
    return f"[{line.style}]{body}[/{line.style}]" if line.style else body


def _header_fields(
    session: SessionInfo, windows: Sequence[WindowInfo], rows: Sequence[Row]
) -> list[tuple[str, str]]:
    meta = session.metadata
    config = meta.get("config") if isinstance(meta.get("config"), Mapping) else {}
    assert isinstance(config, Mapping)
    out: list[tuple[str, str]] = []
    task = meta.get("task")
    if not isinstance(task, str):
        task = next((r.text for r in rows if r.kind == "user" and r.metadata.get("task")), None)
    if task:
        out.append(("task", task))
    model = meta.get("model")
    if isinstance(model, str):
        out.append(("model", model))
    status = session.status
    if meta.get("pause_reason"):
        status += f" (paused: {meta['pause_reason']})"
    out.append(("status", status))
    out.append(("created", when(session.created_at)))
    seals = [SHORT_SEALS.get(w.seal_reason, w.seal_reason) for w in windows if w.seal_reason]
    shown = f"{len(windows)}"
    if seals:
        shown += f" (sealed: {', '.join(seals)})"
    out.append(("windows", shown))
    usage = meta.get("usage")
    turns = _int(meta.get("turns"))
    if isinstance(usage, Mapping):
        fresh = _int(usage.get("input_tokens")) or 0
        written = _int(usage.get("cache_creation_input_tokens")) or 0
        read = _int(usage.get("cache_read_input_tokens")) or 0
        output = _int(usage.get("output_tokens")) or 0
        line = f"{fresh + written + read:,} in"
        if read:
            line += f" ({read:,} read from the cache)"
        line += f", {output:,} out"
        if turns is not None:
            line += f" over {turns:,} responses"
        out.append(("tokens", line))
    cost = meta.get("cost_usd")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        priced = cost > 0 or bool(config.get("prices"))
        out.append(("cost", f"${cost:.4f}" if priced else f"not priced (no prices for {model})"))
    limit, reserve = _int(config.get("limit")), _int(config.get("output_reserve"))
    if limit is not None and reserve is not None:
        budget = f"limit {limit:,} · usable {limit - reserve:,}"
        threshold = config.get("threshold")
        if isinstance(threshold, (int, float)) and not isinstance(threshold, bool):
            budget += " · Off" if threshold >= 100 else f" · handoff at {show_value(threshold)}%"
        out.append(("budget", budget))
    workspace = config.get("workspace")
    if isinstance(workspace, str):
        out.append(("workspace", workspace))
    return out


def _window_title(window: WindowInfo, costs: Mapping[str, Any], created: float) -> str:
    state = "open"
    if window.sealed:
        reason = window.seal_reason or ""
        state = f"{_TITLE_SEALS.get(reason, reason)} at {when(window.sealed_at, day_of=created)}"
    title = f"window {window.index} · {state}"
    spent = costs.get(window.id)
    if isinstance(spent, Mapping):
        turns = _int(spent.get("turns"))
        if turns is not None:
            title += f" · {turns} responses"
        cost = spent.get("cost_usd")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost > 0:
            title += f" · ${cost:.4f}"
    return title


def _field_grid(console: Console, pairs: Iterable[tuple[str, str]], indent: int) -> None:
    from rich.padding import Padding  # noqa: PLC0415 — rich's tables: only --verbose draws one
    from rich.table import Table  # noqa: PLC0415 — rich's tables: only --verbose draws one

    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True, style="dim")
    grid.add_column(overflow="fold")
    for key, value in pairs:
        grid.add_row(Text(key), Text(value))
    console.print(Padding(grid, (0, 0, 0, indent)))


def show_session(
    console: Console,
    session: SessionInfo,
    windows: Sequence[WindowInfo],
    rows: Sequence[Row],
    *,
    verbose: bool = False,
    width: int | None = None,
) -> None:
    """Print ``session``: its header, then each window's timeline."""
    width = width or console.width
    print_line(console, f"[bold]session {escape(session.id)}[/bold]")
    header = _header_fields(session, windows, rows)
    key_width = max(len(k) for k, _ in header)
    if verbose:
        status = [("status", session.status), ("created", when(session.created_at))]
        _field_grid(console, [*status, *fields(session.metadata)], 2)
    else:
        for key, value in header:
            shown = one_line(value, width - key_width - 4)
            print_line(console, f"  [dim]{key.ljust(key_width)}[/dim]  {escape(shown)}")
    lines = [row_line(r) for r in rows]
    costs = _costed(lines)
    window_costs = session.metadata.get("window_costs")
    by_window = window_costs if isinstance(window_costs, Mapping) else {}
    for window in windows:
        console.print()
        print_line(
            console, f"[bold]{escape(_window_title(window, by_window, session.created_at))}[/bold]"
        )
        for row, line in zip(rows, lines, strict=True):
            if row.window_id != window.id:
                continue
            print_line(console, _render(line, costs=costs, width=width))
            if verbose:
                pairs = list(fields(row.metadata))
                if row.text_bytes is not None:
                    pairs.append(("text cut from", f"{row.text_bytes:,} bytes"))
                pairs.append(("created", when(row.created_at)))
                _field_grid(console, pairs, 17)
