"""A run the user stops (``Session.stop``, a cancelled task): the step's tool calls are
finished or answered as abandoned, never left for a resume to call "interrupted by a
restart", and the next run says which (one ``resumed_after_stop`` notice)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ctxrelay.runtime import Runtime
from ctxrelay.runtime._stop import STOP_KEY, StepOutcome, StoppedStep, abandoned_text
from ctxrelay.runtime.events import RESUMED_AFTER_STOP, DispatchEvent, Event, NoticeEvent
from ctxrelay.runtime.providers.scripted import ScriptedProvider, load_steps
from ctxrelay.runtime.tools import ToolContext, ToolResult, builtin_tools
from tests.runtime.helpers import Harness, call


class Effect:
    """A tool with effects (not replay-safe); ``gate`` holds it until the test opens it."""

    name = "effect"
    description = "does something that cannot be repeated"
    replay_safe = False
    input_schema = {"type": "object"}  # noqa: RUF012

    def __init__(self) -> None:
        self.runs = 0
        self.started = asyncio.Event()
        self.gate: asyncio.Event | None = None

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        self.runs += 1
        self.started.set()
        if self.gate is not None:
            await self.gate.wait()
        return ToolResult("did it")


STEPS: list[dict[str, Any]] = [
    {"text": "a", "tool_calls": [call("effect")]},
    {"text": "done"},
]


def _runtime(harness: Harness, effect: Effect, on_event: Any) -> Runtime:
    tools = builtin_tools()
    tools.add(effect)
    provider = ScriptedProvider(load_steps(STEPS), name="scripted:test", log=harness.log)
    return Runtime(harness.store, provider, tools=tools, on_event=on_event)


def _notices(events: list[Event]) -> list[str]:
    return [
        e.message for e in events if isinstance(e, NoticeEvent) and e.code == RESUMED_AFTER_STOP
    ]


def test_a_stop_during_a_request_runs_the_steps_calls_and_the_resume_says_so(
    harness: Harness,
) -> None:
    effect = Effect()

    def stop_at_dispatch(event: Event) -> None:
        if isinstance(event, DispatchEvent):
            session.stop()  # while the request is in flight

    session = _runtime(harness, effect, stop_at_dispatch).start("task", harness.config())
    result = asyncio.run(session.run())
    assert result.status == "stopped"
    assert effect.runs == 1  # the step's call ran before the stop
    (answer,) = [r for r in harness.rows(result.session_id) if r.kind == "tool_result"]
    assert (answer.text, answer.metadata["is_error"]) == ("did it", False)
    kept = harness.store.get_session(result.session_id).metadata[STOP_KEY]
    assert StoppedStep.from_json(kept) == StoppedStep(StepOutcome.FINISHED, ("effect",))

    events: list[Event] = []
    again = _runtime(harness, effect, events.append).open(result.session_id)
    assert asyncio.run(again.run()).status == "done"
    assert effect.runs == 1
    (said,) = _notices(events)
    assert "after its step's tool calls had finished (effect)" in said
    assert harness.store.get_session(result.session_id).metadata[STOP_KEY] is None
    events.clear()
    asyncio.run(_runtime(harness, effect, events.append).open(result.session_id).run("more"))
    assert _notices(events) == []  # said once


def test_a_cancelled_run_answers_the_running_call_as_abandoned(harness: Harness) -> None:
    effect = Effect()

    async def cancel_mid_tool() -> str:
        effect.gate = asyncio.Event()  # never opened: the call runs until cancelled
        session = _runtime(harness, effect, None).start("task", harness.config())
        task = asyncio.create_task(session.run())
        await effect.started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return session.id

    sid = asyncio.run(cancel_mid_tool())
    assert harness.store.get_session(sid).status == "stopped"
    (answer,) = [r for r in harness.rows(sid) if r.kind == "tool_result"]
    assert answer.text == abandoned_text("effect")
    assert (answer.metadata["is_error"], answer.metadata["abandoned"]) == (True, True)

    events: list[Event] = []
    effect.gate = None
    again = _runtime(harness, effect, events.append).open(sid)
    assert asyncio.run(again.run()).status == "done"
    assert effect.runs == 1  # answered, never run again
    (said,) = _notices(events)
    assert "abandoned: effect" in said
    assert not any("interrupted by a restart" in (r.text or "") for r in harness.rows(sid))
