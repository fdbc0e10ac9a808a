"""``ctxrelay analyze``'s run: read the transcripts (and the store), replay them under the
policies, apply the sweep's slider, group the report rows and draw the plot; the result is
what the printing shows."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxrelay.analyze import (
    Pricer,
    Recommendation,
    ReportRow,
    SessionReport,
    analyze_paths,
    analyze_store,
    group_reports,
    recommendation,
)
from ctxrelay.analyze._groups import Grouping, in_range
from ctxrelay.analyze._parallel import start_reading
from ctxrelay.analyze._plot import plot_sessions
from ctxrelay.analyze._skips import Skips
from ctxrelay.cli.analyze._options import Options
from ctxrelay.cli.analyze._print import count
from ctxrelay.errors import ConfigError

__all__ = ["Result", "recommended_slider", "run"]


@dataclass(frozen=True, slots=True)
class Result:
    """What one run found: the sessions, the report's rows (when ``--by``, ``--top`` or a
    date range asked for a report), what ``--apply`` changed and the sessions plotted."""

    reports: list[SessionReport]
    rows: list[ReportRow]
    by: Grouping
    applied: dict[str, Any] | None
    plotted: list[SessionReport] | None
    skipped: list[dict[str, Any]]
    """What could not be read, and why (each already warned about on stderr)."""


def run(options: Options) -> Result:
    """Read, replay, apply and plot as ``options`` say; nothing is printed yet."""
    args = options.args
    replay: dict[str, Any] = {
        "policies": options.policies,
        "sweep": options.sweep,
        "prices": options.prices,
        "limit": args.limit,
        "warm_prefix": args.warm_prefix,
    }
    reports: list[SessionReport] = []
    skips = Skips()  # each warned about on stderr; listed in --json
    if options.paths:
        paths = options.paths
        reading = start_reading(paths)
        try:
            named = {os.path.expanduser(p) for p in paths if os.path.isfile(os.path.expanduser(p))}
            reports = analyze_paths(paths, named=named, on_skip=skips, reading=reading, **replay)
        finally:
            reading.close()
    if args.db:
        reports += analyze_store(args.db, session_ids=args.session, **replay)
    applied = _apply(reports, options) if args.apply else None
    rows: list[ReportRow] = []
    by: Grouping = args.by or "session"
    if options.reporting:
        reports = in_range(reports, options.since, options.until)
        rows = group_reports(
            reports,
            Pricer(options.prices),
            by=by,
            since=options.since,
            until=options.until,
            top=args.top,
        )
    plotted = None
    if args.plot:
        daily = None
        if args.by in ("day", "week", "month"):
            daily = group_reports(
                reports,
                Pricer(options.prices),
                by="day",
                since=options.since,
                until=options.until,
            )
        plotted = plot_sessions(reports, args.plot, daily=daily)
    return Result(reports, rows, by, applied, plotted, skips.entries)


def recommended_slider(reports: Sequence[SessionReport]) -> Recommendation:
    """The sweep's slider when the sweep had enough to go on (``--apply``, ``ctxrelay run
    --threshold auto``); a :class:`ConfigError` sentence when it had not: no session
    replayed and priced, or none ever reached any swept slider's handoff target (then
    every slider costs the same and the cheapest says nothing)."""
    swept = [r for r in reports if r.sweep]
    if swept and not any(r.affected for r in swept):
        raise ConfigError(
            f"the sweep had too little to go on: none of the {count(len(swept), 'session')} "
            "ever reached the handoff target of any slider swept, so every slider costs the "
            "same and no slider was chosen (sweep lower sliders, or analyze longer sessions)"
        )
    found = recommendation(reports)
    if found is None or found.cost_usd is None:
        raise ConfigError(
            "the sweep had too little to go on: no session could be replayed and priced, "
            "so no slider was chosen"
        )
    return found


def _apply(reports: Sequence[SessionReport], options: Options) -> dict[str, Any]:
    """Write the sweep's slider with its evidence into the Claude Code config (before
    anything is printed, so a refusal leaves no half a report); returns what changed."""
    from ctxrelay.claude.config import (  # noqa: PLC0415 — the Claude Code host's config (~2.5 ms): analyze --json loads no host (tests/cli/test_analyze.py)
        ENV_THRESHOLD,
        Scope,
        load,
        set_threshold,
    )

    args = options.args
    found = recommended_slider(reports)
    scope: Scope = "user" if args.user else "project"
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
