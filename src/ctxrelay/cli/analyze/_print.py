"""``ctxrelay analyze``'s printing: the ``--json`` document, or the tables and sentences
of rich (the report's rows, or the sessions, the what-if replay, the sweep and the
replay's assumptions).

The tables fit the terminal's width (:func:`_fitted`): a figure, a date or a model name
is one word and is never cut; a table too wide for the width first wraps its cells at
their spaces, then leaves out its optional columns (named in its caption), and the
what-if table splits its policies over several tables. Nothing is truncated."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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
from ctxrelay.analyze._report import short_name
from ctxrelay.cli._common import console, print_json

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from ctxrelay.analyze import ReplayResult
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
        _render(result.reports, options.sweep, skipped=bool(result.skipped))
    if result.skipped:
        console().print(_skipped_text(result.skipped), markup=False)
    if result.plotted is not None:
        shown = ", ".join(short_name(r.name) for r in result.plotted)
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


def _skipped_text(skipped: Sequence[dict[str, Any]]) -> str:
    files = {s["path"] for s in skipped if "lines" not in s}
    lines = sum(s["lines"] for s in skipped if "lines" in s)
    parts = []
    if files:
        parts.append(f"{count(len(files), 'file')} not read")
    if lines:
        parts.append(f"{count(lines, 'line')} of the files read")
    return f"Skipped: {' and '.join(parts)} (each named, with its reason, on stderr)."


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


@dataclass(frozen=True, slots=True)
class Col:
    """A column of a fitted table. ``drop`` > 0: it may be left out when the table does
    not fit, the highest first; ``split``: when the table does not fit even then, the
    ``split`` columns go to as many tables as they need, each with the others (a
    report's policies); ``fold``: its words may be broken (a folder's name, never a
    figure, a date or a model)."""

    name: str
    right: bool = False
    drop: int = 0
    split: bool = False
    fold: bool = False


_FOLD_MIN = 12
"""The narrowest a folding column gets."""


def _words(text: str) -> list[str]:
    return text.split()


def _fitted(
    out: Console,
    cols: Sequence[Col],
    rows: Sequence[Sequence[str]],
    *,
    title: str,
    caption: str | None = None,
    bold_last: bool = False,
) -> list[tuple[str, Table, str | None]]:
    """Rich tables of ``rows`` no wider than ``out`` (each with its title and caption,
    printed around it at the full width): each column gets at least its
    longest word (so no figure is cut: rich wraps at spaces), the optional columns are
    left out as needed, then the ``split`` columns spread over several tables, and the
    room left is shared up to each column's widest line. One table when it fits."""
    from rich.cells import cell_len  # noqa: PLC0415 — rich: --json draws nothing
    from rich.table import Table  # noqa: PLC0415 — rich: --json draws nothing
    from rich.text import Text  # noqa: PLC0415 — rich: --json draws nothing

    def bounds(k: int) -> tuple[int, int]:
        texts = [cols[k].name, *(row[k] for row in rows)]
        lines = [line for t in texts for line in t.splitlines() or [""]]
        longest = max((cell_len(w) for t in texts for w in _words(t)), default=1)
        widest = max((cell_len(line) for line in lines), default=1)
        low = min(longest, _FOLD_MIN) if cols[k].fold else longest
        return low, max(widest, low)

    size = [bounds(k) for k in range(len(cols))]

    def need(keys: Sequence[int]) -> int:  # a border and a space each side of a column
        return sum(size[k][0] for k in keys) + 3 * len(keys) + 1

    kept = list(range(len(cols)))
    dropped: list[str] = []
    while need(kept) > out.width and any(cols[k].drop for k in kept):
        gone = max((k for k in kept if cols[k].drop), key=lambda k: cols[k].drop)
        kept.remove(gone)
        dropped.append(cols[gone].name)
    parts = [kept]
    if need(kept) > out.width:
        fixed = [k for k in kept if not cols[k].split]
        parts = [[]]
        for k in (k for k in kept if cols[k].split):
            if parts[-1] and need([*fixed, *parts[-1], k]) > out.width:
                parts.append([])
            parts[-1].append(k)
        parts = [sorted([*fixed, *part]) for part in parts]
    tables = []
    for n, part in enumerate(parts):
        widths = [size[k][0] for k in part]
        spare = out.width - need(part)
        for i, k in enumerate(part):  # widen each column up to its widest line
            grow = max(0, min(size[k][1] - widths[i], spare))
            widths[i] += grow
            spare -= grow
        named = title if len(parts) == 1 else f"{title} ({n + 1} of {len(parts)})"
        table = Table()
        for k, width in zip(part, widths, strict=True):
            table.add_column(
                cols[k].name,
                justify="right" if cols[k].right else "left",
                width=width,
                overflow="fold",  # only a folding column is ever narrower than a word
            )
        for r, row in enumerate(rows):
            style = "bold" if bold_last and r == len(rows) - 1 else None
            table.add_row(*(Text(row[k]) for k in part), style=style)
        notes = [caption] if caption and n == len(parts) - 1 else []
        if dropped and n == len(parts) - 1:
            notes.append(f"left out at {out.width} columns: {', '.join(dropped)}")
        tables.append((named, table, "; ".join(notes) or None))
    return tables


def _show(out: Console, tables: Sequence[tuple[str, Table, str | None]]) -> None:
    """Each table under its title, its caption under it, both wrapped at the width."""
    for title, table, caption in tables:
        out.print(title, style="italic", markup=False)
        out.print(table)
        if caption:
            out.print(caption, style="dim", markup=False)


def _render_report(
    rows: Sequence[ReportRow],
    by: str,
    policies: Sequence[str],
    sweep: Sweep | None,
    reports: Sequence[SessionReport],
) -> None:
    out = console()
    if not rows:
        out.print("No requests in the range.")
        return
    # ``none`` is the recording itself: its column would repeat "recorded".
    policies = [name for name in policies if name != "none"]

    def saved(value: float | None, recorded: float | None) -> str:
        if value is None or recorded is None or abs(value - recorded) < 0.005:
            return money(value)
        return f"{money(value)} {(value - recorded) / recorded:+.0%}"

    cells = [
        [
            short_name(row.key) if by == "session" else row.key,
            f"{len(row.sessions):,}",
            f"{row.requests:,}",
            money(row.cost_usd),
            *(saved(row.policy_cost(name), row.cost_usd) for name in policies),
        ]
        for row in rows
    ]
    recorded = [r.cost_usd for r in rows]
    total = None if None in recorded else sum(r or 0.0 for r in recorded)
    sums = []
    for name in policies:
        values = [r.policy_cost(name) for r in rows]
        sums.append(saved(None if None in values else sum(v or 0.0 for v in values), total))
    cells.append(
        [
            "total",
            f"{len({s for r in rows for s in r.sessions}):,}",
            f"{sum(r.requests for r in rows):,}",
            money(total),
            *sums,
        ]
    )
    cols = [
        Col(by, fold=by == "project"),
        Col("sessions", right=True, drop=1),
        Col("requests", right=True, drop=2),
        Col("recorded", right=True),
        *(Col(name, right=True, split=True) for name in policies),
    ]
    caption = (
        "recorded: every response at its own model; a policy: its replay of the main "
        "chain, subagents as recorded"
    )
    title = f"Cost by {by}, recorded and replayed"
    _show(out, _fitted(out, cols, cells, title=title, caption=caption, bold_last=True))
    if sweep is not None:
        found = recommendation(reports)
        if found is not None:
            out.print(_recommendation_text(found))


def _of(part: int, whole: int) -> str:
    """``part`` sessions, said as a part of the run's ``whole`` when it is one."""
    return (
        count(whole, "session") if part == whole else f"{part:,} of the {count(whole, 'session')}"
    )


def policy_cell(result: ReplayResult) -> list[str]:
    """The lines of a policy's cell in the what-if table: its cost, then its peak and
    restarts (each line a few words, so the cell wraps, never cuts)."""
    restarts = result.rollovers + result.forced_rollovers + result.compactions
    peak = f"peak {result.peak_context_tokens / 1000:,.0f}k ↻{restarts}"
    return [money_range(result.range_usd), peak]


def _recorded_text(reports: Sequence[SessionReport]) -> str:
    """What the agents priced their sessions at themselves, where they record it
    (OpenCode), beside ctxrelay's price of the same sessions; "" when none does."""
    own = [r for r in reports if r.transcript.recorded_cost_usd is not None]
    if not own:
        return ""
    recorded = sum(r.transcript.recorded_cost_usd or 0.0 for r in own)
    priced = [r.cost_usd for r in own]
    ours = None if None in priced else sum(p or 0.0 for p in priced)
    return (
        f"; OpenCode recorded {money(recorded)} for its {count(len(own), 'session')} "
        f"(ctxrelay's prices: {money(ours)})"
    )


def _render(reports: Sequence[SessionReport], sweep: Sweep | None, *, skipped: bool) -> None:
    from rich.markup import escape  # noqa: PLC0415 — rich: --json draws nothing
    from rich.table import Table  # noqa: PLC0415 — rich: --json draws nothing
    from rich.text import Text  # noqa: PLC0415 — rich: --json draws nothing

    out = console()
    if not reports:
        out.print("No session could be read." if skipped else "No transcripts found.")
        return
    names = [short_name(r.name) for r in reports]
    kind = {"orphan_subagents": " (orphan)", "sidechain_only": " (sidechain)"}
    rows = []
    for name, r in zip(names, reports, strict=True):
        t = r.transcript
        compactions = ", ".join(f"{c.pre_tokens:,}" if c.pre_tokens else "?" for c in t.compactions)
        agents = (
            f"{len(r.subagents)} ({sum(s.requests for s in r.subagents)} req)"
            if r.subagents
            else "-"
        )
        rows.append(
            [
                name + kind.get(r.kind, ""),
                t.model or "-",
                f"{t.requests:,}",
                f"{t.peak_context_tokens:,}",
                f"{t.final_context_tokens:,}",
                compactions or "-",
                agents,
                money(r.cost_usd),
            ]
        )
    totals = totals_json(reports, None)
    unpriced = totals["unpriced_sessions"]
    caption = (
        f"{count(len(reports), 'session')}, "
        f"{count(sum(r.transcript.requests for r in reports), 'request')}, "
        f"{money(totals['cost_usd'])} (main chain + compaction summaries + subagents)"
        + (f"; {count(unpriced, 'session')} without a price" if unpriced else "")
        + _recorded_text(reports)
    )
    cols = [
        Col("session"),
        Col("model"),
        Col("requests", right=True),
        Col("peak", right=True, drop=3),
        Col("final", right=True, drop=5),
        Col("compactions (pre)", drop=2),
        Col("subagents", right=True, drop=4),
        Col("cost", right=True),
    ]
    _show(out, _fitted(out, cols, rows, title="Sessions as recorded", caption=caption))

    policies = [str(p.policy) for p in reports[0].replays]
    by_policy = {p["policy"]: p["range_usd"] for p in totals["policies"]}
    rows = [
        [name, *("\n".join(policy_cell(result)) for result in r.replays)]
        for name, r in zip(names, reports, strict=True)
    ]
    rows.append(["total", *(money_range(by_policy.get(p)) for p in policies)])
    cols = [Col("session"), *(Col(p, right=True, split=True) for p in policies)]
    title = "What if: the main chain replayed under each policy"
    caption = (
        "cost (low–high: re-reads on edits, on any touch) · peak context · "
        "↻ compactions or rollovers"
    )
    _show(out, _fitted(out, cols, rows, title=title, caption=caption, bold_last=True))

    if sweep is not None:
        affected = [r for r in reports if r.affected]
        points = sweep_totals(affected)
        region = flat_region(points)
        rows = []
        for p in points:
            mark = ""
            if region is not None and p.threshold in region:
                mark = " ◀" if p.threshold == region.middle.threshold else " ·"
            rows.append(
                [
                    f"{p.threshold:g}%{mark}",
                    money_range((p.cost_usd or 0.0, p.high_usd or p.cost_usd or 0.0)),
                    str(p.rollovers),
                    str(p.forced_rollovers),
                    f"{p.peak_context_tokens:,}",
                ]
            )
        cols = [
            Col("slider", right=True),
            Col("cost", right=True),
            Col("rollovers", right=True),
            Col("forced", right=True, drop=1),
            Col("peak", right=True, drop=2),
        ]
        title = f"Sweep handoff:{sweep.start:g}..{sweep.stop:g} (step {sweep.step:g})"
        caption = (
            f"summed over the {_of(len(affected), len(reports))} it affects · "
            "◀ recommended · the flat region"
        )
        _show(out, _fitted(out, cols, rows, title=title, caption=caption))
        found = recommendation(reports)
        if found is not None:
            out.print(_recommendation_text(found))
        per = []
        for name, r in zip(names, reports, strict=True):
            if not r.transcript.requests:
                continue
            own = r.region()
            if own is None:
                per.append(f"{name} not affected")
            else:
                sliders = f"{own.low:g}" if own.low == own.high else f"{own.low:g}–{own.high:g}"
                per.append(f"{name} {sliders}% ({own.middle.threshold:g}%)")
        out.print(f"Per session: {escape(', '.join(per))}.")

    out.print("\n[bold]Assumptions of the replay[/bold]")
    bullets = Table.grid(padding=(0, 1))
    bullets.add_column(width=3, justify="right")
    bullets.add_column()
    for sentence in _assumptions(reports):
        bullets.add_row("•", Text(sentence))
    out.print(bullets)
    rows = []
    for name, r in zip(names, reports, strict=True):
        a = r.assumptions
        m = set(a.measured)

        def cell(key: str, value: int, m: set[str] = m) -> str:
            return f"{value:,}" + ("" if key in m else " (default)")

        rows.append(
            [
                name,
                f"{a.limit:,}" + (" (from the peak)" if "limit" in m else ""),
                f"{a.base_tokens:,}",
                cell("summary_tokens", a.summary_tokens),
                cell("reload_tokens", a.reload_tokens),
                "1h" if a.one_hour_writes else "5m",
            ]
        )
    cols = [
        Col("session"),
        Col("window", right=True),
        Col("base", right=True),
        Col("summary", right=True),
        Col("reload", right=True),
        Col("cache TTL", right=True, drop=1),
    ]
    _show(out, _fitted(out, cols, rows, title="Measured per session"))
    unpriced_models = sorted({m for r in reports for m in r.unpriced_models})
    if unpriced_models:
        out.print(
            f"No prices for {', '.join(unpriced_models)}: their cost is left out; "
            "add them with --prices FILE.",
            style="yellow",
            markup=False,
        )


def _assumptions(reports: Sequence[SessionReport]) -> list[str]:
    """The replay's assumptions in words, each for the sessions it holds for: a sentence
    the same for every session once; one whose numbers differ once per distinct text,
    after the sessions it is for (up to :data:`_SPELLED` texts; the numbers of the
    others are in the table of what was measured per session). A session's numbers are
    never shown as another's."""
    replayed = [r for r in reports if r.transcript.requests] or list(reports[:1])
    per = [(short_name(r.name), r.assumptions.sentences()) for r in replayed]
    lines: list[str] = []
    for i in range(max(len(sentences) for _, sentences in per)):
        groups: dict[str, list[str]] = {}
        for name, sentences in per:
            if i < len(sentences):
                groups.setdefault(sentences[i], []).append(name)
        if len(groups) == 1 and len(next(iter(groups.values()))) == len(per):
            lines.append(next(iter(groups)))
            continue
        for n, (text, names) in enumerate(groups.items()):
            if n == _SPELLED and len(groups) > _SPELLED + 1:
                rest = sum(len(v) for v in list(groups.values())[n:])
                lines.append(
                    f"The same for the other {count(rest, 'session')}, with their own "
                    "numbers (measured per session, below)."
                )
                break
            lines.append(f"{', '.join(names)}: {text}")
    return lines


_SPELLED = 2
"""How many texts of an assumption whose numbers differ between sessions are spelled out."""
