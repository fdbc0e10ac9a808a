"""The agent runtime: context windows that hand off, roll over and resume.

    from ctxrelay.budget import Budget
    from ctxrelay.runtime import Runtime, SessionConfig
    from ctxrelay.runtime.providers import resolve
    from ctxrelay.store import open_store

    runtime = Runtime(open_store("agent.db"), resolve("scripted:steps.json"))
    config = SessionConfig(Budget(limit=200_000, output_reserve=32_000), Path("."))
    session = runtime.start("Fix the failing test", config)
    result = await session.run()

See ``docs/runtime.md``.
"""

from __future__ import annotations

from ctxrelay.runtime._config import DEFAULT_SYSTEM, NewContextPolicy, SessionConfig
from ctxrelay.runtime._session import RunResult, Runtime, Session
from ctxrelay.runtime.cost import Pricer, Prices
from ctxrelay.runtime.events import Event, EventSink
from ctxrelay.runtime.model import ModelProvider, TokenEstimator
from ctxrelay.runtime.plan import (
    DispatchPlan,
    LastResponse,
    WindowState,
    capability_for,
    estimate_request,
    guard_request,
    plan_dispatch,
)
from ctxrelay.runtime.windows import (
    lead_in_text,
    publish_advisory,
    reset_session,
    seal_window,
    window_opening,
    window_state,
)

__all__ = [
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
]


async def run(
    task: str,
    *,
    runtime: Runtime,
    config: SessionConfig,
    session_id: str | None = None,
) -> RunResult:
    """Start a session for ``task`` and run it to its end (done, paused or stopped)."""
    return await runtime.start(task, config, session_id=session_id).run()
