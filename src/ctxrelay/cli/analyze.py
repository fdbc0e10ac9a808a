"""``ctxrelay analyze``: what sessions cost, and what a policy would have cost."""

from __future__ import annotations

import gc
import os
import sys

from ctxrelay.budget.bounds import CONTEXT_PERCENT
from ctxrelay.errors import ConfigError

TYPE_CHECKING = False  # annotations only; mypy reads any constant named TYPE_CHECKING as true
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from datetime import datetime
    from typing import Any

    from rich.console import Console

    from ctxrelay.analyze import Policy, Recommendation, SessionReport, Sweep
    from ctxrelay.analyze._groups import Grouping, ReportRow
    from ctxrelay.analyze._parallel import Reading
    from ctxrelay.cli._parser import ArgumentParser
    from ctxrelay.pricing import PriceTable

__all__ = ["main", "recommended_slider", "skips_teardown"]

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

Every response is priced at its own model (main chain, subagents, compaction
summaries); a response found in several files counts once; a model without a price
is named and its session's cost left blank (add it with --prices).

Reports: --by session|day|week|month|project totals the requests of each row (each
request in the row of its own time, local time zone), --since/--until keep the
requests of a date range (2026-02-10, 20260210, or 7d / 4w ago), --top N keeps the N
most expensive rows. Each row shows the recorded cost and beside it what every
--policy would have cost; with --plot and a time --by, the plot adds the cumulative
cost by day.

PATH is a transcript or a directory searched recursively (default: Claude Code's
projects directory, $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects). --db reads
ctxrelay's own sessions from a store instead (a file path, sqlite:/// or postgresql://
URL; add PATHs to read both).

--apply (with --sweep) writes the recommended slider into the Claude Code plugin's
config, with the evidence beside it (the sessions and dates analysed, the cost as
recorded and at the slider): the project's .ctxrelay/config.json (of --project-dir,
default the current directory), or with --user your own. 'ctxrelay claude config' shows
it. It refuses, writing nothing, when no session ever reached any slider's target.

Examples:
  ctxrelay analyze
  ctxrelay analyze ~/.claude/projects/-home-me-src-app --sweep 30..90
  ctxrelay analyze ~/.claude/projects/-home-me-src-app --sweep 30..90 --apply
  ctxrelay analyze session.jsonl --policy none,compact,handoff:50 --plot curves.png
  ctxrelay analyze --json --sweep 30..90:1 > report.json
  ctxrelay analyze --by month --policy handoff:45
  ctxrelay analyze --since 4w --by week --plot weeks.png
  ctxrelay analyze --top 10
  ctxrelay analyze --prices my-prices.toml
  ctxrelay analyze --db ~/.local/share/ctxrelay/ctxrelay.db --session 3f2a...
"""


def _whole(text: str) -> int:
    import argparse

    try:
        value = int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0, got {text!r}")
    return value


def _parser() -> ArgumentParser:
    import argparse

    from ctxrelay.cli._parser import ArgumentParser

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
    parser.add_argument(
        "--by",
        choices=("session", "day", "week", "month", "project"),
        help="one report row per session, day, week, month or project",
    )
    parser.add_argument(
        "--since", metavar="WHEN", help="only requests from this day on (2026-02-10, 7d, 4w)"
    )
    parser.add_argument(
        "--until", metavar="WHEN", help="only requests up to the end of this day (or time)"
    )
    parser.add_argument(
        "--top", type=_whole, metavar="N", help="only the N most expensive report rows"
    )
    apply = parser.add_argument_group("setting the slider (with --sweep)")
    apply.add_argument(
        "--apply",
        action="store_true",
        help="write the recommended slider, with its evidence, into the Claude Code config",
    )
    apply.add_argument(
        "--project-dir", metavar="DIR", help="the project whose config --apply writes (default: .)"
    )
    apply.add_argument(
        "--user", action="store_true", help="--apply writes your user config instead"
    )
    parser.add_argument("--json", action="store_true", help="print only JSON")
    return parser


def _plain_json(argv: Sequence[str]) -> Any:
    """The arguments of ``analyze [PATH...] --json``, the machine's usual call, without
    building the parser (argparse and its imports cost more than a small corpus takes
    to read); ``None`` for anything else, which the parser reads.
    ``tests/cli/test_analyze.py`` holds this to what the parser gives."""
    args = list(argv)
    if args.count("--json") != 1 or any(a.startswith("-") and a != "--json" for a in args):
        return None
    paths = [a for a in args if a != "--json"]
    defaults: dict[str, Any] = {
        "paths": paths,
        "policy": [],
        "sweep": None,
        "prices": None,
        "limit": None,
        "warm_prefix": False,
        "plot": None,
        "db": None,
        "session": [],
        "by": None,
        "since": None,
        "until": None,
        "top": None,
        "apply": False,
        "project_dir": None,
        "user": False,
        "json": True,
    }
    # an argparse.Namespace to its readers; types.SimpleNamespace, without importing types
    return type(sys.implementation)(**defaults)


def skips_teardown(argv: Sequence[str]) -> bool:
    """Whether the process may end without the interpreter's teardown after
    ``main(argv)``: the plain ``analyze [PATH...] --json`` reads files and prints one
    document, and leaves nothing open that a teardown would close
    (:func:`ctxrelay.cli._end`)."""
    return _plain_json(argv) is not None


def _console() -> Console:
    from ctxrelay.cli._common import console

    return console()


def _early_read(argv: Sequence[str]) -> Reading | None:
    """For the machine's usual call (``analyze [PATH...] --json``), the transcripts'
    read, started before anything else of the command is imported: on two cores a child
    reads while this process imports the rest (``docs/analyze.md``, "How it reads").
    ``None`` for any other call, or when the paths are wrong (the command's own checks
    then say so)."""
    plain = _plain_json(argv)
    if plain is None:
        return None
    from ctxrelay.analyze._discover import default_projects_dir
    from ctxrelay.analyze._parallel import start_reading

    paths = plain.paths or [default_projects_dir()]
    try:
        return start_reading(paths)
    except Exception:  # a wrong path: the checks in _main report it in the command's words
        return None


def main(argv: Sequence[str]) -> int:
    """``ctxrelay analyze``. Python's cycle collector is paused meanwhile (reference
    counting still frees everything it reads): the analyzer makes no cycles, and the
    collector's passes over the thousands of decoded records and the imported modules
    cost a tenth of a small run (measured: 3-4 ms of 45 in process)."""
    paused = gc.isenabled()
    gc.disable()
    early = _early_read(argv)
    try:
        from ctxrelay.cli._common import handle_errors  # after the read has started

        return handle_errors(_main)(argv, early)
    finally:
        if early is not None:
            early.close()
        if paused:
            gc.enable()


def _main(argv: Sequence[str], early: Reading | None) -> int:
    args: argparse.Namespace = _plain_json(argv) or _parser().parse_args(list(argv))
    from ctxrelay.analyze._discover import default_projects_dir
    from ctxrelay.analyze._policies import DEFAULT_POLICIES, parse_policies, parse_sweep

    policies = parse_policies(args.policy) if args.policy else DEFAULT_POLICIES
    sweep = parse_sweep(args.sweep) if args.sweep else None
    custom_prices = None
    if args.prices:
        from ctxrelay.pricing import load_prices

        custom_prices = load_prices(args.prices)
    since = until = None
    if args.since or args.until:
        from ctxrelay.analyze._groups import parse_when

        since = parse_when(args.since) if args.since else None
        until = parse_when(args.until, end=True) if args.until else None
        if since is not None and until is not None and until < since:
            raise ConfigError(f"--until {args.until} is before --since {args.since}")
    if args.plot and not args.plot.lower().endswith(".png"):
        raise ConfigError(
            f"--plot writes a PNG file; give a name ending in .png, not {args.plot!r}"
        )
    if args.plot:
        from ctxrelay.analyze._plot import _pyplot

        _pyplot()  # fail before the work if the plot extra is missing
    if args.session and not args.db:
        raise ConfigError("--session names a stored session; give the store with --db")
    if args.apply and sweep is None:
        raise ConfigError("--apply writes the slider a sweep recommends; give --sweep A..B")
    if (args.user or args.project_dir) and not args.apply:
        raise ConfigError("--user and --project-dir say where --apply writes; add --apply")
    paths: list[str] = list(args.paths)
    if not paths and not args.db:
        paths = [default_projects_dir()]
        if not os.path.isdir(paths[0]):
            raise ConfigError(
                f"no Claude Code projects directory at {os.fspath(paths[0])}; give a "
                "transcript or a directory"
            )
    # Every check is done: the transcripts are read (by a child, when they are worth
    # one) while the rest of the analyzer is imported here.
    reading = None
    if paths:
        from ctxrelay.analyze._parallel import start_reading

        reading = early if early is not None and early.paths == paths else start_reading(paths)
    try:
        return _report_on(
            args,
            reading,
            paths=paths,
            policies=policies,
            sweep=sweep,
            custom_prices=custom_prices,
            since=since,
            until=until,
        )
    finally:
        if reading is not None:
            reading.close()


def _report_on(
    args: argparse.Namespace,
    reading: Reading | None,
    *,
    paths: list[str],
    policies: Sequence[Policy],
    sweep: Sweep | None,
    custom_prices: PriceTable | None,
    since: datetime | None,
    until: datetime | None,
) -> int:
    from ctxrelay.analyze._report import analyze_paths, report_json
    from ctxrelay.analyze._skips import Skips
    from ctxrelay.pricing import DEFAULT_PRICES

    prices = custom_prices or DEFAULT_PRICES
    options: dict[str, Any] = {
        "policies": policies,
        "sweep": sweep,
        "prices": prices,
        "limit": args.limit,
        "warm_prefix": args.warm_prefix,
    }
    reports: list[SessionReport] = []
    skips = Skips()  # each warned about on stderr; listed in --json
    if reading is not None:
        named = {os.path.expanduser(p) for p in paths if os.path.isfile(os.path.expanduser(p))}
        reports = analyze_paths(paths, named=named, on_skip=skips, reading=reading, **options)
    if args.db:
        from ctxrelay.analyze import analyze_store

        reports += analyze_store(args.db, session_ids=args.session, **options)
    applied = _apply(reports, args) if args.apply else None
    reporting = bool(args.by or args.top or since or until)
    rows: list[ReportRow] = []
    by: Grouping = args.by or "session"
    if reporting:
        from ctxrelay.analyze._bill import Pricer
        from ctxrelay.analyze._groups import group_reports, in_range

        reports = in_range(reports, since, until)
        rows = group_reports(reports, Pricer(prices), by=by, since=since, until=until, top=args.top)
    if args.plot:
        from ctxrelay.analyze._plot import plot_sessions

        daily = None
        if args.by in ("day", "week", "month"):
            from ctxrelay.analyze._bill import Pricer
            from ctxrelay.analyze._groups import group_reports

            daily = group_reports(reports, Pricer(prices), by="day", since=since, until=until)
        plotted = plot_sessions(reports, args.plot, daily=daily)
    if args.json:
        doc = report_json(reports, sweep, skips.entries)
        if sweep is not None:
            from ctxrelay.analyze._groups import recommendation

            found = recommendation(reports)
            doc["totals"]["recommendation"] = None if found is None else found.as_json()
        if applied is not None:
            doc["applied"] = applied
        if reporting:
            doc["report"] = {
                "by": by,
                "since": None if since is None else since.isoformat(),
                "until": None if until is None else until.isoformat(),
                "top": args.top,
                "rows": [row.as_json() for row in rows],
            }
        from ctxrelay.cli._common import print_json

        print_json(doc)
        return 0
    if reporting:
        _render_report(rows, by, [str(p) for p in policies], sweep, reports)
    else:
        _render(reports, sweep)
    if args.plot:
        shown = ", ".join(r.session_id[:8] for r in plotted)
        _console().print(f"Plot written to {args.plot} ({shown}).", markup=False)
    if applied is not None:
        _console().print(_applied_text(applied), markup=False, soft_wrap=True)
    return 0


def recommended_slider(reports: Sequence[SessionReport]) -> Recommendation:
    """The sweep's slider when the sweep had enough to go on (``--apply``, ``ctxrelay run
    --threshold auto``); a :class:`ConfigError` sentence when it had not: no session
    replayed and priced, or none ever reached any swept slider's handoff target (then
    every slider costs the same and the cheapest says nothing)."""
    from ctxrelay.analyze import sweep_totals
    from ctxrelay.analyze._groups import recommendation

    swept = [r for r in reports if r.sweep]
    found = recommendation(reports)
    if found is None or found.cost_usd is None:
        raise ConfigError(
            "the sweep had too little to go on: no session could be replayed and priced, "
            "so no slider was chosen"
        )
    if not any(p.rollovers for p in sweep_totals(swept)):
        raise ConfigError(
            f"the sweep had too little to go on: none of the {_count(len(swept), 'session')} "
            "ever reached the handoff target of any slider swept, so every slider costs the "
            "same and no slider was chosen (sweep lower sliders, or analyze longer sessions)"
        )
    return found


def _apply(reports: Sequence[SessionReport], args: argparse.Namespace) -> dict[str, Any]:
    """Write the sweep's slider with its evidence into the Claude Code config (before
    anything is printed, so a refusal leaves no half a report); returns what changed."""
    from datetime import UTC, datetime

    from ctxrelay.claude.config import ENV_THRESHOLD, Scope, load, set_threshold

    found = recommended_slider(reports)
    scope: Scope = "user" if args.user else "project"
    from pathlib import Path  # --apply only

    project = Path(args.project_dir or ".").resolve()
    before = load(project)
    evidence = {
        **found.as_json(),
        "sweep": args.sweep,
        "applied_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    path = set_threshold(found.threshold, evidence, scope=scope, project_dir=project)
    after = load(project)
    return {
        "path": str(path),
        "scope": scope,
        "threshold": found.threshold,
        "previous_threshold": before.threshold,
        "previous_source": before.threshold_source,
        "evidence": evidence,
        "effective_source": after.threshold_source,
        "overridden_by": ENV_THRESHOLD if after.threshold_source == "env" else None,
        "shadowed_by_project": scope == "user" and after.threshold_source == "project",
    }


def _applied_text(applied: dict[str, Any]) -> str:
    e = applied["evidence"]
    span = f"{str(e['first_timestamp'])[:10]} to {str(e['last_timestamp'])[:10]}"
    text = (
        f"Set the Claude Code slider to {applied['threshold']:g}% in {applied['path']} "
        f"(was {applied['previous_threshold']:g}%, {applied['previous_source']}): "
        f"{_count(e['sessions'], 'session')} from {span}, {_money(e['cost_usd'])} at this "
        f"slider against {_money(e['recorded_cost_usd'])} as recorded (main chains)."
    )
    if applied["overridden_by"]:
        text += f" Note: {applied['overridden_by']} is set and overrides the file."
    elif applied["shadowed_by_project"]:
        text += " Note: this project's own config sets a slider, which wins over yours."
    return text


def _render_report(
    rows: Sequence[ReportRow],
    by: str,
    policies: Sequence[str],
    sweep: Sweep | None,
    reports: Sequence[SessionReport],
) -> None:
    from rich.markup import escape
    from rich.table import Table

    out = _console()
    if not rows:
        out.print("No requests in the range.")
        return
    # ``none`` is the recording itself: its column would repeat "recorded".
    policies = [name for name in policies if name != "none"]
    table = Table(title=f"Cost by {by}, recorded and replayed", title_justify="left")
    table.add_column(by, no_wrap=True)
    for name in ("sessions", "requests", "recorded"):
        table.add_column(name, justify="right", no_wrap=True)
    for name in policies:
        table.add_column(name, justify="right", no_wrap=True)

    def saved(value: float | None, recorded: float | None) -> str:
        if value is None or recorded is None or abs(value - recorded) < 0.005:
            return _money(value)
        return f"{_money(value)} {(value - recorded) / recorded:+.0%}"

    for row in rows:
        key = row.key[:8] if by == "session" else row.key
        table.add_row(
            escape(key),
            f"{len(row.sessions):,}",
            f"{row.requests:,}",
            _money(row.cost_usd),
            *(saved(row.policy_cost(name), row.cost_usd) for name in policies),
        )
    recorded = [r.cost_usd for r in rows]
    total = None if None in recorded else sum(r or 0.0 for r in recorded)
    sums = []
    for name in policies:
        values = [r.policy_cost(name) for r in rows]
        sums.append(saved(None if None in values else sum(v or 0.0 for v in values), total))
    table.add_row(
        "total",
        f"{len({s for r in rows for s in r.sessions}):,}",
        f"{sum(r.requests for r in rows):,}",
        _money(total),
        *sums,
        style="bold",
    )
    table.caption = (
        "recorded: every response at its own model; a policy: its replay of the main "
        "chain, subagents as recorded"
    )
    out.print(table)
    if sweep is not None:
        from ctxrelay.analyze._groups import recommendation

        found = recommendation(reports)
        if found is not None:
            out.print(
                f"Recommended slider: [bold]{found.threshold:g}%[/bold] over "
                f"{_count(found.sessions, 'session')}: {_money(found.cost_usd)} against "
                f"{_money(found.recorded_cost_usd)} recorded (main chains)."
            )


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:,.2f}"


def _render(reports: Sequence[SessionReport], sweep: Sweep | None) -> None:
    from rich.markup import escape
    from rich.table import Table

    from ctxrelay.analyze import sweep_totals, totals_json
    from ctxrelay.analyze._report import recommend

    out = _console()
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
        kind = {"orphan_subagents": " (orphan)", "sidechain_only": " (sidechain)"}
        table.add_row(
            escape(r.session_id[:8]) + kind.get(r.kind, ""),
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
