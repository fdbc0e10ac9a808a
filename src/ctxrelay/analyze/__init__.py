"""``ctxrelay analyze``: what Claude Code sessions cost, and what a policy would have cost.

It reads transcripts with :mod:`ctxrelay.transcripts`, prices them with
:mod:`ctxrelay.pricing`, and replays each main chain under ``none`` (as recorded),
``compact`` (Claude Code's auto-compaction), ``handoff:P`` (ctxrelay's slider, decided
by :func:`ctxrelay.budget.evaluate` at every dispatch) and ``mask:N`` (observation
masking), each priced as a range. The replay's assumptions are in
:class:`Assumptions` and are printed with every result.

Every response is priced at its own model (:class:`Bill`). Reports over many sessions
(:func:`group_reports`), the sweep's :func:`recommendation`, :func:`analyze_store` and
:func:`handoff_savings` (what a stored session's handoffs saved against one window, the
demo's last lines) are here too.
"""

from __future__ import annotations

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
    SWEEP_MARGIN,
    FlatRegion,
    SessionReport,
    SubagentReport,
    SweepPoint,
    analyze_paths,
    analyze_session,
    analyze_transcript,
    flat_region,
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
    "SWEEP_MARGIN",
    "Assumptions",
    "Bill",
    "FlatRegion",
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
    "flat_region",
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
