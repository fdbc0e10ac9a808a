"""The pure policy core: numbers in, decisions out. No I/O, no imports of ctxrelay.

Both hosts call it: the runtime at every dispatch, the Claude Code plugin in its hooks,
and the analyzer when it replays a transcript under a policy.

The names below load on first use (PEP 562): the hook imports only
``ctxrelay.budget.bounds`` and ``ctxrelay.budget.triggers``, and must not pay for the
policy's enums at every tool call.
"""

from __future__ import annotations

TYPE_CHECKING = False  # mypy reads any constant named TYPE_CHECKING as true
if TYPE_CHECKING:
    from typing import Any

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

_POLICY = "ctxrelay.budget._policy"
_SIMULATE = "ctxrelay.budget._simulate"
_WORDING = "ctxrelay.budget._wording"
_HOME: dict[str, str] = {
    "DEFAULT_WARNING_LEAD": _POLICY,
    "MIN_EFFECTIVE_THRESHOLD": _POLICY,
    "OFF_THRESHOLD": _POLICY,
    "Action": _POLICY,
    "Budget": _POLICY,
    "BudgetValueError": _POLICY,
    "Capability": _POLICY,
    "Decision": _POLICY,
    "Stage": _POLICY,
    "evaluate": _POLICY,
    "Step": _SIMULATE,
    "simulate": _SIMULATE,
    "DEFAULT_NOTES_FILE": _WORDING,
    "AdvisoryMetadata": _WORDING,
    "advisory_metadata": _WORDING,
    "advisory_text": _WORDING,
    "handoff_text": _WORDING,
    "warning_text": _WORDING,
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # Here, not above: the hook imports this package, never these names. ``from``
    # imports, not importlib.import_module: the importlib package imports ``warnings``.
    if home == _POLICY:
        from ctxrelay.budget import _policy

        value = getattr(_policy, name)
    elif home == _SIMULATE:
        from ctxrelay.budget import _simulate

        value = getattr(_simulate, name)
    else:
        from ctxrelay.budget import _wording

        value = getattr(_wording, name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
