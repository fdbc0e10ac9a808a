"""``ctxrelay analyze``: what sessions cost, and what a policy would have cost."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxrelay.budget.bounds import CONTEXT_PERCENT
from ctxrelay.cli._common import ArgumentParser, console, handle_errors, print_json
from ctxrelay.errors import ConfigError

if TYPE_CHECKING:
    from ctxrelay.analyze import SessionReport, Sweep

__all__ = ["main"]

_DESCRIPTION = """\
Measure Claude Code sessions from their transcripts and replay them under other
context policies.

For each session (and each of its subagents): requests (unique message ids), peak and
final context, compactions, usage by category and cost. Then a what-if replay of the
main chain under each --policy:

  none        the session as recorded (its own compactions included)
  compact     Claude Code's auto-compaction: a summary request near the limit, then
              the chain continues from base + summary
  handoff:P   ctxrelay with the slider at P percent: a rollover to base + notes at the
              handoff target, decided by the policy core at every request

--sweep A..B[:STEP] replays handoff:P for every P in the range and recommends the
cheapest. The replay's assumptions are printed with the results (and are in --json).

PATH is a transcript or a directory searched recursively (default: Claude Code's
projects directory, $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects). --db reads
ctxrelay's own sessions from a store instead (a file path, sqlite:/// or postgresql://
URL; add PATHs to read both).

Examples:
  ctxrelay analyze
  ctxrelay analyze ~/.claude/projects/-home-me-src-app --sweep 30..90
  ctxrelay analyze session.jsonl --policy none,compact,handoff:50 --plot curves.png
  ctxrelay analyze --json --sweep 30..90:1 > report.json
  ctxrelay analyze --prices my-prices.toml
  ctxrelay analyze --db ~/.local/share/ctxrelay/ctxrelay.db --session 3f2a...
"""


def _whole(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0, got {text!r}")
    return value


def _parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="ctxrelay analyze",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="transcripts or directories")
    parser.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="POLICY",
        help="none, compact, handoff:P; repeat or separate with commas "
        f"(default: none,compact,handoff:{CONTEXT_PERCENT})",
    )
    parser.add_argument(
        "--sweep", metavar="A..B[:STEP]", help="replay handoff:P for each P and recommend one"
    )
    parser.add_argument(
        "--prices", metavar="FILE", help="JSON or TOML prices laid over the built-in table"
    )
    parser.add_argument(
        "--limit",
        type=_whole,
        metavar="TOKENS",
        help="the context window (default: from each session's model, 200,000 for Claude)",
    )
    parser.add_argument(
        "--warm-prefix",
        action="store_true",
        help="after a restart the shared prefix (system prompt, tools) stays cached, as "
        "recorded compactions show (default: a cold cache)",
    )
    parser.add_argument(
        "--plot", metavar="FILE.png", help="draw the context curves (needs the plot extra)"
    )
    parser.add_argument(
        "--db", metavar="DB", help="also read ctxrelay sessions from this store (path or URL)"
    )
    parser.add_argument(
        "--session",
        action="append",
        default=[],
        metavar="ID",
        help="with --db: only this stored session (repeatable)",
    )
    parser.add_argument("--json", action="store_true", help="print only JSON")
    return parser


@handle_errors
def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    from ctxrelay.analyze import (
        DEFAULT_POLICIES,
        default_projects_dir,
        discover,
        parse_policies,
        parse_sweep,
        report_json,
    )
    from ctxrelay.pricing import DEFAULT_PRICES, load_prices

    policies = parse_policies(args.policy) if args.policy else DEFAULT_POLICIES
    sweep = parse_sweep(args.sweep) if args.sweep else None
    prices = load_prices(args.prices) if args.prices else DEFAULT_PRICES
    if args.plot and not args.plot.lower().endswith(".png"):
        raise ConfigError(
            f"--plot writes a PNG file; give a name ending in .png, not {args.plot!r}"
        )
    if args.plot:
        from ctxrelay.analyze._plot import _pyplot

        _pyplot()  # fail before the work if the plot extra is missing
    if args.session and not args.db:
        raise ConfigError("--session names a stored session; give the store with --db")
    paths: list[str | Path] = list(args.paths)
    if not paths and not args.db:
        paths = [default_projects_dir()]
        if not Path(paths[0]).is_dir():
            raise ConfigError(
                f"no Claude Code projects directory at {os.fspath(paths[0])}; give a "
                "transcript or a directory"
            )
    sessions = discover(paths) if paths else []
    options: dict[str, Any] = {
        "policies": policies,
        "sweep": sweep,
        "prices": prices,
        "limit": args.limit,
        "warm_prefix": args.warm_prefix,
    }
    named = {Path(p) for p in paths if Path(p).is_file()}
    reports = _run(sessions, named, **options)
    if args.db:
        from ctxrelay.analyze import analyze_store

        reports += analyze_store(args.db, session_ids=args.session, **options)
    if args.plot:
        from ctxrelay.analyze._plot import plot_sessions

        plotted = plot_sessions(reports, args.plot)
    if args.json:
        print_json(report_json(reports, sweep))
        return 0
    _render(reports, sweep)
    if args.plot:
        shown = ", ".join(r.session_id[:8] for r in plotted)
        console().print(f"Plot written to {args.plot} ({shown}).", markup=False)
    return 0


def _run(sessions: list[Path], named: set[Path], **options: Any) -> list[SessionReport]:
    """Analyze each file with a progress bar on stderr (shown only on a terminal).

    A file the user named that cannot be read is an error; one found while searching a
    directory is skipped with a warning, so one bad file does not hide all the others.
    """
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

    from ctxrelay.analyze import analyze_session
    from ctxrelay.errors import TranscriptError

    sizes = []
    for p in sessions:
        try:
            sizes.append(p.stat().st_size)
        except OSError:
            sizes.append(0)
    err = console(stderr=True)
    reports: list[SessionReport] = []
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        DownloadColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    ) as progress:
        task = progress.add_task("reading transcripts", total=sum(sizes))
        for path, size in zip(sessions, sizes, strict=True):
            try:
                report = analyze_session(path, **options)
                # A file that never sent a request is no session, unless named.
                if not report.empty or path in named:
                    reports.append(report)
            except TranscriptError as exc:
                if path in named:
                    raise
                sys.stderr.write(f"ctxrelay: warning: skipped {os.fspath(path)}: {exc}\n")
            progress.advance(task, size)
    return reports


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:,.2f}"


def _render(reports: Sequence[SessionReport], sweep: Sweep | None) -> None:
    from rich.markup import escape
    from rich.table import Table

    from ctxrelay.analyze import sweep_totals, totals_json
    from ctxrelay.analyze._report import recommend

    out = console()
    if not reports:
        out.print("No transcripts found.")
        return
    table = Table(title="Sessions as recorded", title_justify="left")
    for name in ("session", "model", "requests", "peak", "final", "compactions (pre)"):
        table.add_column(name, justify="right" if name in ("requests", "peak", "final") else "left")
    table.add_column("subagents", justify="right")
    table.add_column("cost", justify="right")
    for r in reports:
        t = r.transcript
        compactions = ", ".join(f"{c.pre_tokens:,}" if c.pre_tokens else "?" for c in t.compactions)
        agents = (
            f"{len(r.subagents)} ({sum(s.requests for s in r.subagents)} req)"
            if r.subagents
            else "-"
        )
        table.add_row(
            escape(r.session_id[:8]),
            escape(t.model or "-"),
            f"{t.requests:,}",
            f"{t.peak_context_tokens:,}",
            f"{t.final_context_tokens:,}",
            compactions or "-",
            agents,
            _money(r.cost_usd),
        )
    totals = totals_json(reports, None)
    total = totals["cost_usd"]
    unpriced = totals["unpriced_sessions"]
    table.caption = (
        f"{_count(len(reports), 'session')}, "
        f"{_count(sum(r.transcript.requests for r in reports), 'request')}, "
        f"{_money(total)} (main chain + compaction summaries + subagents)"
        + (f"; {_count(unpriced, 'session')} without a price" if unpriced else "")
    )
    out.print(table)

    policies = [str(p.policy) for p in reports[0].replays]
    whatif = Table(title="What if: the main chain replayed under each policy", title_justify="left")
    whatif.add_column("session")
    for name in policies:
        whatif.add_column(name, justify="right")
    by_policy = {p["policy"]: p["cost_usd"] for p in totals["policies"]}
    for r in reports:
        cells = []
        for result in r.replays:
            restarts = result.rollovers + result.forced_rollovers + result.compactions
            cells.append(
                f"{_money(result.cost_usd)}  peak {result.peak_context_tokens / 1000:,.0f}k"
                f"  ↻{restarts}"
            )
        whatif.add_row(escape(r.session_id[:8]), *cells)
    whatif.add_row("total", *[_money(by_policy.get(name)) for name in policies], style="bold")
    whatif.caption = "cost · peak context · ↻ compactions or rollovers"
    out.print(whatif)

    if sweep is not None:
        points = sweep_totals(reports)
        best = recommend(points)
        table = Table(
            title=f"Sweep handoff:{sweep.start:g}..{sweep.stop:g} "
            f"(step {sweep.step:g}), summed over {_count(len(reports), 'session')}",
            title_justify="left",
        )
        for name in ("slider", "cost", "rollovers", "forced", "peak"):
            table.add_column(name, justify="right")
        for p in points:
            mark = " ◀" if best is not None and p.threshold == best.threshold else ""
            table.add_row(
                f"{p.threshold:g}%{mark}",
                _money(p.cost_usd),
                str(p.rollovers),
                str(p.forced_rollovers),
                f"{p.peak_context_tokens:,}",
            )
        out.print(table)
        if best is not None:
            per = ", ".join(
                f"{escape(r.session_id[:8])} {rec.threshold:g}%"
                for r in reports
                if (rec := r.recommended()) is not None and r.transcript.requests
            )
            out.print(
                f"Recommended slider: [bold]{best.threshold:g}%[/bold] "
                f"({_money(best.cost_usd)} in all). Per session: {per}."
            )

    out.print("\n[bold]Assumptions of the replay[/bold]")
    first = next((r for r in reports if r.transcript.requests), reports[0])
    for sentence in first.assumptions.sentences():
        out.print(f"  • {sentence}")
    measured = Table(title="Measured per session", title_justify="left")
    for name in ("session", "window", "base", "summary", "reload", "cache TTL"):
        measured.add_column(name, justify="left" if name == "session" else "right")
    for r in reports:
        a = r.assumptions
        m = set(a.measured)

        def cell(name: str, value: int, m: set[str] = m) -> str:
            return f"{value:,}" + ("" if name in m else " (default)")

        measured.add_row(
            escape(r.session_id[:8]),
            f"{a.limit:,}" + (" (from the peak)" if "limit" in m else ""),
            f"{a.base_tokens:,}",
            cell("summary_tokens", a.summary_tokens),
            cell("reload_tokens", a.reload_tokens),
            "1h" if a.one_hour_writes else "5m",
        )
    out.print(measured)
    unpriced = sorted({m for r in reports for m in r.unpriced_models})
    if unpriced:
        out.print(
            f"[yellow]No prices for {escape(', '.join(unpriced))}: their cost is left out; "
            "add them with --prices FILE.[/yellow]"
        )
