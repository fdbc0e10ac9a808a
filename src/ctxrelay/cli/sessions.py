"""``ctxrelay sessions list|show|history|search|reset``: look into (and reset) stored
sessions."""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.text import Text

from ctxrelay.cli._common import ArgumentParser, console, handle_errors, print_json
from ctxrelay.cli._ids import resolve_session, short_ids
from ctxrelay.cli._screen import screen_console
from ctxrelay.cli._session_view import SHORT_SEALS, show_session, when
from ctxrelay.cli._suggest import suggest
from ctxrelay.store import (
    DB_ENV,
    HistoryHit,
    Row,
    Store,
    WindowInfo,
    open_store,
    resolve_target,
)

__all__ = ["SHOW_ONE", "main", "show_json"]

_DESCRIPTION = f"""\
Look into the sessions a ctxrelay store holds, and reset one.

  list              sessions, newest first
  show ID           every window of a session and its rows (the host's full view)
  history ID        what the agent's session_history tool sees (after the newest reset):
                      the visible windows, --search TEXT, or --window N [--offset --limit]
  search ID TEXT    find text in what session_history sees (history ID --search TEXT)
  reset ID          seal the open window with manual_reset and open a fresh one; history
                      never shows the agent anything from before it (the privacy floor)

ID may be a unique prefix of a session id. --db takes a file path, a sqlite:///path URL or
a postgresql://user:password@host:port/db URL; without it ${DB_ENV} or the default file
in your data directory is used.

Examples:
  ctxrelay sessions list
  ctxrelay sessions show 3f9c --json
  ctxrelay sessions search 3f9c "pytest -k"
  ctxrelay sessions history 3f9c --window 2 --offset 40 --limit 20
  ctxrelay sessions list --db postgresql://ctx:secret@127.0.0.1:5432/ctxrelay
"""

_LIST_HELP = """\
List the sessions of a store, newest first: the start of each id (enough to name it),
when it was created, its status, how many windows it has, why they were sealed
(handoff: the agent called new_context; forced: the usable limit), its cost and task.

Examples:
  ctxrelay sessions list
  ctxrelay sessions list --limit 5 --json
  ctxrelay sessions list --db postgresql://ctx:secret@127.0.0.1:5432/ctxrelay
"""

_SHOW_HELP = """\
Show a session: a header (task, model, status, windows, tokens, cost, budget), then each
window as a timeline, one line per row: its sequence number, what it is, the context
tokens and cost of each model response, and one line of its text. The advisories and
seals are called out: "warning at N tokens", "handoff requested at N tokens", "notes
written", "sealed by new_context", "sealed by a forced rollover". This is the host's
full view, including windows hidden from the agent by a reset.

--verbose lists every metadata field of the session and of each row. --json prints the
documented JSON contract ({"session_id", "windows": [{"index", "id", "seal_reason",
"rows"}]}).

Examples:
  ctxrelay sessions show 3f9c                 # a unique prefix of the id is enough
  ctxrelay sessions show 3f9c --verbose       # every field of every row
  ctxrelay sessions show 3f9c --json | jq '.windows[].seal_reason'
"""

_HISTORY_HELP = """\
Show what the agent's session_history tool sees: only this session, only windows after
the newest reset. Without options: the visible windows. --search TEXT: case-insensitive
matches, newest first, with an excerpt of each. --window N: the rows of window N, paged
with --offset and --limit. Results are bounded like the tool's (16 KiB of text).

Examples:
  ctxrelay sessions history 3f9c
  ctxrelay sessions history 3f9c --search "pytest -k"
  ctxrelay sessions history 3f9c --window 2 --offset 40 --limit 20
  ctxrelay sessions history 3f9c --search TODO --json
"""

_SEARCH_HELP = """\
Find text in a session's history as the agent's session_history tool does: only this
session, only windows after the newest reset; case-insensitive matches, newest first,
with an excerpt of each, bounded like the tool's results (16 KiB of text). The same as
`sessions history ID --search TEXT`.

Examples:
  ctxrelay sessions search 3f9c "pytest -k"
  ctxrelay sessions search 3f9c TODO --limit 5 --json
"""

_RESET_HELP = """\
Seal the open window of a session with manual_reset and open a fresh one. From then on
session_history never shows the agent anything from before the reset (the privacy floor);
`sessions show` still does. A running dispatch of the session is waited for (--wait).
The next message to the session starts in the new window.

Examples:
  ctxrelay sessions reset 3f9c
  ctxrelay sessions reset 3f9c --wait 60 --json
  ctxrelay run --resume 3f9c "start over from the plan in notes.md"   # afterwards
"""

SHOW_ONE = "A unique start of an id is enough. Show one with:"
"""The line of ``sessions list`` before the command that shows the newest session."""

#: How long ``reset`` waits for a dispatch of the session to finish.
RESET_WAIT_S = 10.0


def _when(stamp: float | None) -> str:
    if stamp is None:
        return ""
    return dt.datetime.fromtimestamp(stamp).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def _one_line(text: str | None, width: int = 100) -> str:
    if text is None:
        return ""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _add_row(table: Any, *values: str) -> None:
    """Cells as plain text: stored text is never read as rich markup."""
    table.add_row(*(Text(v) for v in values))


def show_json(store: Store, session_id: str) -> dict[str, Any]:
    """The ``sessions show --json`` object (``docs/contracts.md``)."""
    by_window: dict[str, list[dict[str, Any]]] = {}
    for row in store.rows(session_id):
        item: dict[str, Any] = {"kind": row.kind, "metadata": dict(row.metadata)}
        if row.text is not None:
            item["text"] = row.text
        by_window.setdefault(row.window_id, []).append(item)
    return {
        "session_id": session_id,
        "windows": [
            {
                "index": w.index,
                "id": w.id,
                "seal_reason": w.seal_reason,
                "rows": by_window.get(w.id, []),
            }
            for w in store.windows(session_id)
        ],
    }


def _window_json(w: WindowInfo) -> dict[str, Any]:
    return {
        "index": w.index,
        "id": w.id,
        "seal_reason": w.seal_reason,
        "opened_at": w.opened_at,
        "sealed_at": w.sealed_at,
    }


def _row_json(row: Row) -> dict[str, Any]:
    return {
        "seq": row.seq,
        "kind": row.kind,
        "text": row.text,
        "text_bytes": row.text_bytes,
        "metadata": dict(row.metadata),
        "created_at": row.created_at,
    }


def _list(store: Store, args: argparse.Namespace) -> None:
    sessions = store.list_sessions(limit=args.limit)
    summary = []
    for s in sessions:
        windows = store.windows(s.id)
        summary.append((s, windows))
    if args.json:
        print_json(
            {
                "sessions": [
                    {
                        "session_id": s.id,
                        "status": s.status,
                        "created_at": s.created_at,
                        "windows": len(ws),
                        "current_window": ws[-1].index if ws else None,
                        "metadata": dict(s.metadata),
                    }
                    for s, ws in summary
                ]
            }
        )
        return
    out = screen_console()
    if not sessions:
        out.print(f"No sessions in {store_label(store)}.", markup=False)
        return
    from rich.table import Table  # noqa: PLC0415 — rich's tables: --json draws none

    prefixes = short_ids([s.id for s in sessions])
    out.print(f"Sessions in {store_label(store)}, newest first:", markup=False, overflow="fold")
    table = Table(
        box=None,
        padding=(0, 2, 0, 0),
        pad_edge=False,
        header_style="bold underline",
    )
    table.add_column("session", no_wrap=True)
    table.add_column("created", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("windows", justify="right", no_wrap=True)
    table.add_column("sealed", no_wrap=True, overflow="ellipsis", max_width=24)
    table.add_column("cost", justify="right", no_wrap=True)
    table.add_column("task", no_wrap=True, overflow="ellipsis")
    cells: list[list[str]] = []
    for s, ws in summary:
        counts: dict[str, int] = {}
        for w in ws:
            if w.seal_reason:
                name = SHORT_SEALS.get(w.seal_reason, w.seal_reason)
                counts[name] = counts.get(name, 0) + 1
        sealed = ", ".join(f"{n}× {k}" if n > 1 else k for k, n in counts.items()) or "-"
        cost = s.metadata.get("cost_usd")
        shown_cost = (
            f"${cost:.4f}"
            if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost > 0
            else "-"
        )
        task = s.metadata.get("task")
        cells.append(
            [
                prefixes[s.id],
                when(s.created_at, short=True),
                s.status,
                str(len(ws)),
                _one_line(sealed, 24),
                shown_cost,
                task if isinstance(task, str) else "",
            ]
        )
    # The task takes what the other columns leave (two spaces between columns).
    names = [str(c.header) for c in table.columns]
    used = sum(
        max(len(names[i]), *(len(row[i]) for row in cells)) + 2 for i in range(len(names) - 1)
    )
    room = max(out.width - used, len(names[-1]))
    for row in cells:
        _add_row(table, *row[:-1], _one_line(row[-1], room))
    out.print(table)
    out.print()
    db = ["--db", args.db] if args.db else []
    out.print(SHOW_ONE, markup=False)
    # A command on a line of its own, as the demo prints one: never cut, and left to the
    # terminal to wrap, so that it copies whole.
    command = suggest("sessions", "show", prefixes[sessions[0].id], *db)
    out.print(Text(f"  {command}"), soft_wrap=True)


def _show(store: Store, args: argparse.Namespace) -> None:
    session = resolve_session(store, args.id)
    if args.json:
        print_json(show_json(store, session.id))
        return
    show_session(
        screen_console(),
        session,
        store.windows(session.id),
        store.rows(session.id),
        verbose=args.verbose,
        width=args.width,
    )


def _search(store: Store, args: argparse.Namespace) -> None:
    """``sessions search ID TEXT``, which is ``sessions history ID --search TEXT``."""
    session = resolve_session(store, args.id)
    hits = store.history_search(session.id, args.search, limit=args.limit or 20)
    if args.json:
        print_json(
            {
                "session_id": session.id,
                "query": args.search,
                "hits": [
                    {"window": h.window_index, "excerpt_start": h.excerpt_start} | _row_json(h.row)
                    for h in hits
                ],
            }
        )
    else:
        _hits_table(hits, args)


def _history(store: Store, args: argparse.Namespace) -> None:
    if args.search is not None:
        _search(store, args)
        return
    session = resolve_session(store, args.id)
    if args.window is not None:
        rows = store.history_read(
            session.id, args.window, offset=args.offset, limit=args.limit or 50
        )
        if args.json:
            print_json(
                {
                    "session_id": session.id,
                    "window": args.window,
                    "offset": args.offset,
                    "rows": [_row_json(r) for r in rows],
                }
            )
            return
        from rich.table import Table  # noqa: PLC0415 — rich's tables: --json draws none

        table = Table(title=f"window {args.window} from row {args.offset}", title_justify="left")
        table.add_column("seq", justify="right")
        table.add_column("kind")
        table.add_column("text")
        for r in rows:
            cut = f" [cut from {r.text_bytes:,} bytes]" if r.text_bytes is not None else ""
            _add_row(table, str(r.seq), r.kind, _one_line(r.text, args.width) + cut)
        console().print(table)
        return
    windows = store.history_windows(session.id)
    if args.json:
        print_json({"session_id": session.id, "windows": [_window_json(w) for w in windows]})
        return
    from rich.table import Table  # noqa: PLC0415 — rich's tables: --json draws none

    table = Table(title=escape(f"windows visible to session {session.id}"), title_justify="left")
    table.add_column("index", justify="right")
    table.add_column("opened")
    table.add_column("sealed")
    table.add_column("reason")
    for w in windows:
        _add_row(table, str(w.index), _when(w.opened_at), _when(w.sealed_at), w.seal_reason or "")
    console().print(table)


def _hits_table(hits: list[HistoryHit], args: argparse.Namespace) -> None:
    out = console()
    if not hits:
        out.print(f"No match for {args.search!r} in the visible history.", markup=False)
        return
    from rich.table import Table  # noqa: PLC0415 — rich's tables: --json draws none

    table = Table(title=escape(f"matches for {args.search!r}, newest first"), title_justify="left")
    table.add_column("window", justify="right")
    table.add_column("seq", justify="right")
    table.add_column("kind")
    table.add_column("excerpt")
    for h in hits:
        _add_row(
            table,
            str(h.window_index),
            str(h.row.seq),
            h.row.kind,
            _one_line(h.row.text, args.width),
        )
    out.print(table)


def _reset(store: Store, args: argparse.Namespace) -> None:
    session = resolve_session(store, args.id)
    with store.dispatch_lock(session.id, timeout=args.wait):
        window = store.reset(session.id)
    if args.json:
        print_json({"session_id": session.id, "window": {"index": window.index, "id": window.id}})
        return
    console().print(
        f"Session {session.id}: window {window.index - 1} sealed (manual_reset); "
        f"window {window.index} is open and history before it is hidden from the agent.",
        markup=False,
    )


def store_label(store: Store) -> str:
    describe = getattr(store, "describe", None)
    return str(describe()) if callable(describe) else type(store).__name__


def _parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="ctxrelay sessions",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(
        dest="action", required=True, metavar="list|show|history|search|reset"
    )
    common = ArgumentParser(add_help=False)
    common.add_argument(
        "--db", help=f"store file or URL (default: ${DB_ENV} or the user data directory)"
    )
    common.add_argument("--json", action="store_true", help="print only JSON")
    listing = sub.add_parser(
        "list",
        parents=[common],
        help="sessions, newest first",
        description=_LIST_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    listing.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    show = sub.add_parser(
        "show",
        parents=[common],
        help="all windows and rows of a session",
        description=_SHOW_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    show.add_argument("id", help="session id (or a unique prefix)")
    show.add_argument(
        "--verbose", "-v", action="store_true", help="every metadata field of each row"
    )
    show.add_argument(
        "--width", type=int, help="line width (default: the terminal's; 100 in a pipe)"
    )
    hist = sub.add_parser(
        "history",
        parents=[common],
        help="what the agent's session_history sees",
        description=_HISTORY_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    hist.add_argument("id", help="session id (or a unique prefix)")
    hist.add_argument("--search", metavar="TEXT", help="case-insensitive text search")
    hist.add_argument("--window", type=int, metavar="N", help="read rows of window N")
    hist.add_argument("--offset", type=int, default=0, help="first row to read (default 0)")
    hist.add_argument("--limit", type=int, help="rows or hits (default 50 / 20; at most 500)")
    hist.add_argument("--width", type=int, default=100, help="text column width in tables")
    search = sub.add_parser(
        "search",
        parents=[common],
        help="find text in what session_history sees",
        description=_SEARCH_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    search.add_argument("id", help="session id (or a unique prefix)")
    search.add_argument("search", metavar="TEXT", help="case-insensitive text to find")
    search.add_argument("--limit", type=int, help="hits (default 20; at most 500)")
    search.add_argument("--width", type=int, default=100, help="excerpt column width")
    reset = sub.add_parser(
        "reset",
        parents=[common],
        help="manual reset (the privacy floor)",
        description=_RESET_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    reset.add_argument("id", help="session id (or a unique prefix)")
    reset.add_argument(
        "--wait",
        type=float,
        default=RESET_WAIT_S,
        help="seconds to wait for a running dispatch of the session (default %(default)s)",
    )
    return parser


@handle_errors
def main(argv: Sequence[str]) -> int:
    parser = _parser()
    args = parser.parse_args(list(argv))
    if args.action == "history" and args.search is not None and args.window is not None:
        parser.error("give either --search or --window, not both")
    if args.action == "list" and args.db is None:
        where = resolve_target(None)
        if isinstance(where, Path) and not where.exists():  # a first run: nothing yet
            if args.json:
                print_json({"sessions": []})
            else:
                console().print(
                    f"No sessions yet (no store at {where}); {suggest('demo')} makes one.",
                    markup=False,
                )
            return 0
    # Never create a store where there was none: a typo in --db is an error, not a new file.
    store = open_store(args.db, create=False)
    try:
        actions = {
            "list": _list,
            "show": _show,
            "history": _history,
            "search": _search,
            "reset": _reset,
        }
        actions[args.action](store, args)
    finally:
        store.close()
    return 0
