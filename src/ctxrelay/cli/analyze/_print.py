"""``ctxrelay analyze``'s printing: the ``--json`` document, or the tables and sentences
of rich (the report's rows, or the sessions, the what-if replay, the sweep and the
replay's assumptions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ctxrelay.analyze import (
    Recommendation,
    ReportRow,
    SessionReport,
    Sweep,
    flat_region,
    recommendation,
    report_json,
    sweep_totals,
    totals_json,
)
from ctxrelay.cli._common import console, print_json

if TYPE_CHECKING:
    from ctxrelay.cli.analyze._options import Options
    from ctxrelay.cli.analyze._run import Result

__all__ = ["count", "money", "print_result"]


def count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def money(value: float | None) -> str:
    return "-" if value is None else f"${value:,.2f}"


def money_range(span: Sequence[float] | None) -> str:
    """A replay's cost range, ``$9.42–10.41`` (one figure when both ends round alike)."""
    if span is None:
        return "-"
    low, high = money(span[0]), money(span[1])
    return low if low == high else f"{low}–{high[1:]}"


def print_result(result: Result, options: Options) -> None:
    """Print ``result`` as ``options`` ask: one JSON document with ``--json``, else the
    tables, then what was plotted and what ``--apply`` changed."""
    args = options.args
    if args.json:
        print_json(_document(result, options))
        return
    if options.reporting:
        policies = [str(p) for p in options.policies]
        _render_report(result.rows, result.by, policies, options.sweep, result.reports)
    else:
        _render(result.reports, options.sweep)
    if result.plotted is not None:
        shown = ", ".join(r.session_id[:8] for r in result.plotted)
        console().print(f"Plot written to {args.plot} ({shown}).", markup=False)
    if result.applied is not None:
        console().print(_applied_text(result.applied), markup=False, soft_wrap=True)


def _document(result: Result, options: Options) -> dict[str, Any]:
    """The ``--json`` document: the sessions and totals, the sweep's recommendation, what
    ``--apply`` changed and the report's rows, each when asked for."""
    doc = report_json(result.reports, options.sweep, result.skipped)
    if options.sweep is not None:
        found = recommendation(result.reports)
        doc["totals"]["recommendation"] = None if found is None else found.as_json()
    if result.applied is not None:
        doc["applied"] = result.applied
    if options.reporting:
        since, until = options.since, options.until
        doc["report"] = {
            "by": result.by,
            "since": None if since is None else since.isoformat(),
            "until": None if until is None else until.isoformat(),
            "top": options.args.top,
            "rows": [row.as_json() for row in result.rows],
        }
    return doc


def _region_text(region: Sequence[float], margin: float) -> str:
    """The flat region in words."""
    low, high = region
    sliders = f"{low:g}%" if low == high else f"{low:g}–{high:g}%"
    return (
        f"the flat region {sliders}, every slider whose high estimate is within "
        f"{margin:.0%} of the best's"
    )


def _recommendation_text(found: Recommendation) -> str:
    """What the sweep recommends, with its region, range and the sessions left out."""
    text = (
        f"Recommended slider: [bold]{found.threshold:g}%[/bold], the middle of "
        f"{_region_text(found.region, found.margin)}: "
        f"{money_range((found.cost_usd or 0.0, found.high_cost_usd or 0.0))} over "
        f"{count(found.sessions, 'session')} against {money(found.recorded_cost_usd)} "
        "recorded (main chains)."
    )
    if found.not_affected:
        text += f" {count(found.not_affected, 'session')} reached no slider: not affected."
    return text


def _applied_text(applied: dict[str, Any]) -> str:
    e = applied["evidence"]
    span = f"{str(e['first_timestamp'])[:10]} to {str(e['last_timestamp'])[:10]}"
    text = (
        f"Set the Claude Code slider to {applied['threshold']:g}% in {applied['path']} "
        f"(was {applied['previous_threshold']:g}%, {applied['previous_source']}), "
        f"{_region_text(e['region'], e['margin'])}: "
        f"{count(e['sessions'], 'session')} from {span}, "
        f"{money_range(e['range_usd'])} at this slider against "
        f"{money(e['recorded_cost_usd'])} as recorded (main chains)."
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
    from rich.markup import escape  # noqa: PLC0415 — rich: --json draws nothing
    from rich.table import Table  # noqa: PLC0415 — rich: --json draws nothing

    out = console()
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
            return money(value)
        return f"{money(value)} {(value - recorded) / recorded:+.0%}"

    for row in rows:
        key = row.key[:8] if by == "session" else row.key
        table.add_row(
            escape(key),
            f"{len(row.sessions):,}",
            f"{row.requests:,}",
            money(row.cost_usd),
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
        money(total),
        *sums,
        style="bold",
    )
    table.caption = (
        "recorded: every response at its own model; a policy: its replay of the main "
        "chain, subagents as recorded"
    )
    out.print(table)
    if sweep is not None:
        found = recommendation(reports)
        if found is not None:
            out.print(_recommendation_text(found))


def _render(reports: Sequence[SessionReport], sweep: Sweep | None) -> None:
    from rich.markup import escape  # noqa: PLC0415 — rich: --json draws nothing
    from rich.table import Table  # noqa: PLC0415 — rich: --json draws nothing

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
        kind = {"orphan_subagents": " (orphan)", "sidechain_only": " (sidechain)"}
        table.add_row(
            escape(r.session_id[:8]) + kind.get(r.kind, ""),
            escape(t.model or "-"),
            f"{t.requests:,}",
            f"{t.peak_context_tokens:,}",
            f"{t.final_context_tokens:,}",
            compactions or "-",
            agents,
            money(r.cost_usd),
        )
    totals = totals_json(reports, None)
    total = totals["cost_usd"]
    unpriced = totals["unpriced_sessions"]
    table.caption = (
        f"{count(len(reports), 'session')}, "
        f"{count(sum(r.transcript.requests for r in reports), 'request')}, "
        f"{money(total)} (main chain + compaction summaries + subagents)"
        + (f"; {count(unpriced, 'session')} without a price" if unpriced else "")
    )
    out.print(table)

    policies = [str(p.policy) for p in reports[0].replays]
    whatif = Table(title="What if: the main chain replayed under each policy", title_justify="left")
    whatif.add_column("session")
    for name in policies:
        whatif.add_column(name, justify="right")
    by_policy = {p["policy"]: p["range_usd"] for p in totals["policies"]}
    for r in reports:
        cells = []
        for result in r.replays:
            restarts = result.rollovers + result.forced_rollovers + result.compactions
            cells.append(
                f"{money_range(result.range_usd)}  peak {result.peak_context_tokens / 1000:,.0f}k"
                f"  ↻{restarts}"
            )
        whatif.add_row(escape(r.session_id[:8]), *cells)
    whatif.add_row("total", *[money_range(by_policy.get(name)) for name in policies], style="bold")
    whatif.caption = (
        "cost (low–high: re-reads on edits, on any touch) · peak context · "
        "↻ compactions or rollovers"
    )
    out.print(whatif)

    if sweep is not None:
        affected = [r for r in reports if r.affected]
        points = sweep_totals(affected)
        region = flat_region(points)
        table = Table(
            title=f"Sweep handoff:{sweep.start:g}..{sweep.stop:g} "
            f"(step {sweep.step:g}), summed over the {count(len(affected), 'session')} "
            "it affects",
            title_justify="left",
        )
        for name in ("slider", "cost", "rollovers", "forced", "peak"):
            table.add_column(name, justify="right")
        for p in points:
            mark = ""
            if region is not None and p.threshold in region:
                mark = " ◀" if p.threshold == region.middle.threshold else " ·"
            table.add_row(
                f"{p.threshold:g}%{mark}",
                money_range((p.cost_usd or 0.0, p.high_usd or p.cost_usd or 0.0)),
                str(p.rollovers),
                str(p.forced_rollovers),
                f"{p.peak_context_tokens:,}",
            )
        table.caption = "◀ recommended · the flat region"
        out.print(table)
        found = recommendation(reports)
        if found is not None:
            out.print(_recommendation_text(found))
        per = []
        for r in reports:
            if not r.transcript.requests:
                continue
            own = r.region()
            name = escape(r.session_id[:8])
            if own is None:
                per.append(f"{name} not affected")
            else:
                sliders = f"{own.low:g}" if own.low == own.high else f"{own.low:g}–{own.high:g}"
                per.append(f"{name} {sliders}% ({own.middle.threshold:g}%)")
        out.print(f"Per session: {', '.join(per)}.")

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
