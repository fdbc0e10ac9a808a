"""The pure policy core: numbers in, decisions out. No I/O, no imports of ctxrelay.

Both hosts call it: the runtime at every dispatch, the Claude Code plugin in its hooks,
and the analyzer when it replays a transcript under a policy.
"""

from __future__ import annotations

from ctxrelay.budget._policy import (
    DEFAULT_WARNING_LEAD,
    MIN_EFFECTIVE_THRESHOLD,
    OFF_THRESHOLD,
    Action,
    Budget,
    BudgetValueError,
    Capability,
    Decision,
    Stage,
    evaluate,
)
from ctxrelay.budget._simulate import Step, simulate
from ctxrelay.budget._wording import (
    DEFAULT_NOTES_FILE,
    AdvisoryMetadata,
    advisory_metadata,
    advisory_text,
    handoff_text,
    warning_text,
)

__all__ = [
    "DEFAULT_NOTES_FILE",
    "DEFAULT_WARNING_LEAD",
    "MIN_EFFECTIVE_THRESHOLD",
    "OFF_THRESHOLD",
    "Action",
    "AdvisoryMetadata",
    "Budget",
    "BudgetValueError",
    "Capability",
    "Decision",
    "Stage",
    "Step",
    "advisory_metadata",
    "advisory_text",
    "evaluate",
    "handoff_text",
    "simulate",
    "warning_text",
]
