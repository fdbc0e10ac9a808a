"""The public surface of each package, pinned: adding, removing or renaming a public name
is a decision (and a CHANGELOG line), so it must show up here as a changed test."""

from __future__ import annotations

import importlib

import pytest

PUBLIC: dict[str, list[str]] = {
    "ctxrelay": ["CtxrelayError", "__version__"],
    "ctxrelay.budget": [
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
    ],
    "ctxrelay.runtime": [
        "DEFAULT_SYSTEM",
        "DispatchPlan",
        "Event",
        "EventSink",
        "LastResponse",
        "ModelProvider",
        "NewContextPolicy",
        "Pricer",
        "Prices",
        "RunResult",
        "Runtime",
        "Session",
        "SessionConfig",
        "TokenEstimator",
        "WindowState",
        "capability_for",
        "estimate_request",
        "guard_request",
        "lead_in_text",
        "plan_dispatch",
        "publish_advisory",
        "reset_session",
        "run",
        "seal_window",
        "window_opening",
        "window_state",
    ],
    "ctxrelay.store": [
        "DB_ENV",
        "HISTORY_LINE_MAX_BYTES",
        "HISTORY_RESULT_MAX_BYTES",
        "HISTORY_ROWS_MAX",
        "HISTORY_SCAN_MAX_BYTES",
        "LEASE_TTL_S",
        "ROW_KINDS",
        "SEAL_REASONS",
        "HistoryHit",
        "Lease",
        "NewRow",
        "Row",
        "RowKind",
        "SealReason",
        "SessionInfo",
        "Store",
        "WindowInfo",
        "default_store_path",
        "open_store",
        "resolve_target",
    ],
    "ctxrelay.testing": [
        "ANTHROPIC_ERROR_TYPES",
        "DONE_TEXT",
        "AnthropicServer",
        "Fault",
        "FaultKind",
        "GeminiServer",
        "Hold",
        "LocalServer",
        "OpenAIServer",
        "RecordedRequest",
        "Router",
        "Script",
        "Step",
        "ThrowawayPostgres",
        "ToolUse",
        "estimate_tokens",
        "find_server_binaries",
        "load_steps",
        "route_by_content",
    ],
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_all_is_pinned_and_every_name_resolves(module: str) -> None:
    mod = importlib.import_module(module)
    assert list(mod.__all__) == PUBLIC[module]
    for name in mod.__all__:
        assert getattr(mod, name) is not None, f"{module}.{name} does not resolve"
