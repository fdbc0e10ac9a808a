"""``ctxrelay analyze``: what Claude Code sessions cost, and what a policy would have cost.

It reads transcripts with :mod:`ctxrelay.transcripts`, prices them with
:mod:`ctxrelay.pricing`, and replays each main chain under ``none`` (as recorded),
``compact`` (Claude Code's auto-compaction) and ``handoff:P`` (ctxrelay's slider, decided
by :func:`ctxrelay.budget.evaluate` at every dispatch). The replay's assumptions are in
:class:`Assumptions` and are printed with every result.

Every response is priced at its own model (:class:`Bill`). Reports over many sessions
(:func:`group_reports`), the sweep's :func:`recommendation`, :func:`analyze_store` and
:func:`handoff_savings` (what a stored session's handoffs saved against one window, the
demo's last lines) load on first use, so ``--json`` without them does not import their
modules.

Every name loads on first use (PEP 562): ``ctxrelay analyze --json`` starts reading the
transcripts (:mod:`ctxrelay.analyze._discover`, :mod:`ctxrelay.analyze._parallel`)
before it imports the rest of the analyzer.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # mypy reads any constant named TYPE_CHECKING as true
if TYPE_CHECKING:
    from typing import Any

    from ctxrelay.analyze._bill import (
        Bill,
        Pricer,
    )
    from ctxrelay.analyze._discover import (
        default_projects_dir,
        discover,
    )
    from ctxrelay.analyze._groups import (
        GROUPINGS,
        Recommendation,
        ReportRow,
        group_reports,
        parse_when,
        recommendation,
    )
    from ctxrelay.analyze._policies import (
        DEFAULT_POLICIES,
        Policy,
        Sweep,
        parse_policies,
        parse_policy,
        parse_sweep,
    )
    from ctxrelay.analyze._replay import (
        Assumptions,
        ReplayResult,
        SimRequest,
        measure_assumptions,
        replay,
    )
    from ctxrelay.analyze._report import (
        SessionReport,
        SubagentReport,
        SweepPoint,
        analyze_paths,
        analyze_session,
        analyze_transcript,
        recommend,
        report_json,
        sweep_totals,
        totals_json,
    )
    from ctxrelay.analyze._savings import (
        Savings,
        handoff_savings,
    )
    from ctxrelay.analyze._store import (
        analyze_store,
    )

__all__ = [
    "DEFAULT_POLICIES",
    "GROUPINGS",
    "Assumptions",
    "Bill",
    "Policy",
    "Pricer",
    "Recommendation",
    "ReplayResult",
    "ReportRow",
    "Savings",
    "SessionReport",
    "SimRequest",
    "SubagentReport",
    "Sweep",
    "SweepPoint",
    "analyze_paths",
    "analyze_session",
    "analyze_store",
    "analyze_transcript",
    "default_projects_dir",
    "discover",
    "group_reports",
    "handoff_savings",
    "measure_assumptions",
    "parse_policies",
    "parse_policy",
    "parse_sweep",
    "parse_when",
    "recommend",
    "recommendation",
    "replay",
    "report_json",
    "sweep_totals",
    "totals_json",
]

_HOME: dict[str, str] = {
    "Bill": "_bill",
    "Pricer": "_bill",
    "DEFAULT_POLICIES": "_policies",
    "Policy": "_policies",
    "Sweep": "_policies",
    "parse_policies": "_policies",
    "parse_policy": "_policies",
    "parse_sweep": "_policies",
    "Assumptions": "_replay",
    "ReplayResult": "_replay",
    "SimRequest": "_replay",
    "measure_assumptions": "_replay",
    "replay": "_replay",
    "SessionReport": "_report",
    "SubagentReport": "_report",
    "SweepPoint": "_report",
    "analyze_paths": "_report",
    "analyze_session": "_report",
    "analyze_transcript": "_report",
    "recommend": "_report",
    "report_json": "_report",
    "sweep_totals": "_report",
    "totals_json": "_report",
    "default_projects_dir": "_discover",
    "discover": "_discover",
    "GROUPINGS": "_groups",
    "Recommendation": "_groups",
    "ReportRow": "_groups",
    "group_reports": "_groups",
    "parse_when": "_groups",
    "recommendation": "_groups",
    "Savings": "_savings",
    "handoff_savings": "_savings",
    "analyze_store": "_store",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = f"{__name__}.{home}"
    __import__(module)
    value = getattr(sys.modules[module], name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
