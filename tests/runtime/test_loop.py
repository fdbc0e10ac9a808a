"""The loop's behaviours (docs/runtime.md) through the real loop, a real SQLite store and the
scripted model."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from ctxrelay.budget import Budget, Capability, Stage, handoff_text
from ctxrelay.runtime import Runtime
from ctxrelay.runtime.events import (
    AdvisoryEvent,
    DispatchEvent,
    Event,
    NoticeEvent,
    RolloverEvent,
    StartEvent,
)
from ctxrelay.runtime.model import ModelRequest, ModelResponse, TextBlock
from ctxrelay.runtime.providers.scripted import ScriptedProvider, load_steps
from ctxrelay.runtime.tools import ToolContext, ToolResult, ToolSet, builtin_tools
from ctxrelay.runtime.tools.files import NOTES_MAX_BYTES
from tests.runtime.helpers import SMALL, Harness, call

# warning 5,000 · target 6,000 · usable 8,000 (SMALL)
WARN_THEN_HANDOFF: list[dict[str, Any]] = [
    {"text": "a", "tool_calls": [call("read_file", path="a.txt")], "input_tokens": 1_000},
    {"text": "b", "tool_calls": [call("read_file", path="a.txt")], "input_tokens": 5_100},
    {"text": "c", "tool_calls": [call("read_file", path="a.txt")], "input_tokens": 6_100},
    {"text": "all done", "input_tokens": 6_300},
]


def _texts(request: ModelRequest) -> list[str]:
    return [b.text for m in request.messages for b in m.content if isinstance(b, TextBlock)]


class Inspecting(ScriptedProvider):
    """The scripted model, also recording what the store held when each request came."""

    def __init__(self, steps: list[dict[str, Any]], harness: Harness) -> None:
        super().__init__(load_steps(steps), name="scripted:inspect", log=harness.log)
        self.harness = harness
        self.seen: list[tuple[ModelRequest, list[str]]] = []

    async def complete(
        self, request: ModelRequest, *, on_text: Callable[[str], None] | None = None
    ) -> ModelResponse:
        sid = str(request.metadata["session_id"])
        kinds: list[str] = [r.kind for r in self.harness.store.rows(sid)]
        self.seen.append((request, kinds))
        return await super().complete(request, on_text=on_text)


def test_warning_then_handoff_each_once_published_before_the_request(harness: Harness) -> None:
    (harness.workspace / "a.txt").write_text("alpha\n")
    provider = Inspecting(WARN_THEN_HANDOFF, harness)
    runtime = Runtime(harness.store, provider, on_event=harness.events.append)
    session = runtime.start("task", harness.config())
    result = asyncio.run(session.run())
    assert result.status == "done"
    assert harness.decisions() == [
        (1, "continue", None),
        (1, "continue", None),
        (1, "warn", "warning"),
        (1, "warn", "handoff"),
    ]
    assert harness.advisories(result.session_id) == [(1, "warning"), (1, "handoff")]
    # Each advisory row was durable when its request reached the model, and is in it.
    req3, kinds3 = provider.seen[2]
    assert kinds3.count("warning") == 1
    assert "Context warning" in _texts(req3)[-1]
    req4, kinds4 = provider.seen[3]
    assert kinds4.count("warning") == 2
    assert "Context handoff requested" in _texts(req4)[-1]
    handoff = next(
        r for r in harness.rows(result.session_id) if r.metadata.get("stage") == "handoff"
    )
    assert handoff.metadata["handoff"] is True
    assert handoff.metadata["handoffTokens"] == 6_000
    assert handoff.metadata["budgetTokens"] == 8_000
    assert harness.store.claims(handoff.window_id) == {"warning", "handoff"}
    assert [e.stage for e in harness.events if isinstance(e, AdvisoryEvent)] == [
        "warning",
        "handoff",
    ]


def test_handoff_supersedes_an_undelivered_warning(harness: Harness) -> None:
    (harness.workspace / "a.txt").write_text("alpha\n")
    steps: list[dict[str, Any]] = [
        {"text": "a", "tool_calls": [call("read_file", path="a.txt")], "input_tokens": 6_200},
        {"text": "b", "tool_calls": [call("read_file", path="a.txt")], "input_tokens": 5_200},
        {"text": "done", "input_tokens": 5_300},
    ]
    result = harness.run(steps)
    assert harness.decisions() == [
        (1, "continue", None),
        (1, "warn", "handoff"),
        (1, "continue", None),  # the warning is suppressed once the handoff is claimed
    ]
    assert harness.advisories(result.session_id) == [(1, "handoff")]


@pytest.mark.parametrize(
    ("policy", "tools", "capability"),
    [
        ("offered", None, Capability.FULL),
        ("conditional", None, Capability.CONDITIONAL),
        ("forbidden", None, Capability.DEGRADED),
        ("offered", ("session_history",), Capability.DEGRADED),
    ],
)
def test_handoff_wording_follows_the_tool_policy(
    harness: Harness, policy: str, tools: tuple[str, ...] | None, capability: Capability
) -> None:
    (harness.workspace / "a.txt").write_text("alpha\n")
    toolset = builtin_tools().without(*tools) if tools else None
    steps: list[dict[str, Any]] = [
        {"text": "a", "tool_calls": [call("read_file", path="a.txt")], "input_tokens": 6_100},
        {"text": "done", "input_tokens": 6_300},
    ]
    result = harness.run(steps, tools=toolset, new_context=policy)
    row = next(r for r in harness.rows(result.session_id) if r.kind == "warning")
    tokens = int(row.metadata["tokens"])
    history = toolset is None or "session_history" in toolset
    assert row.text == handoff_text(SMALL, tokens, capability, history_available=history)
    offered = [e["tools"] for e in harness.received()]
    for names in offered:
        assert ("new_context" in names) is (capability is not Capability.DEGRADED)


def test_off_blocks_at_the_limit_and_never_offers_new_context(harness: Harness) -> None:
    (harness.workspace / "a.txt").write_text("alpha\n")
    off = Budget(limit=10_000, output_reserve=2_000, threshold=100)
    steps: list[dict[str, Any]] = [
        {"text": "a", "tool_calls": [call("read_file", path="a.txt")], "input_tokens": 7_000},
        {"text": "b", "tool_calls": [call("read_file", path="a.txt")], "input_tokens": 8_500},
        {"text": "never sent"},
    ]
    result = harness.run(steps, budget=off)
    assert result.status == "paused"
    assert result.reason == "limit"
    assert harness.decisions()[-1][1] == "block"
    assert harness.advisories(result.session_id) == []
    assert all("new_context" not in e["tools"] for e in harness.received())
    assert len(harness.received()) == 2  # the blocked request was never sent
    assert harness.seals(result.session_id) == [None]


def test_forced_rollover_carries_unseen_results_and_never_oversends(harness: Harness) -> None:
    (harness.workspace / "big.txt").write_text("x" * 3_000)
    (harness.workspace / "a.txt").write_text("alpha\n")
    steps: list[dict[str, Any]] = [
        {"text": "a", "tool_calls": [call("read_file", path="a.txt")], "input_tokens": 4_000},
        {"text": "b", "tool_calls": [call("read_file", path="big.txt")], "input_tokens": 5_500},
        {"text": "in window 2", "input_tokens": 900},
    ]
    result = harness.run(steps)
    assert result.status == "done"
    assert harness.seals(result.session_id) == ["forced", None]
    decisions = harness.decisions()
    assert (1, "rollover", None) in decisions
    received = harness.received()
    assert all(e["estimated_tokens"] <= e["usable_limit"] for e in received)
    assert all(e["loop_bytes"] == e["bytes"] for e in received)
    window2 = harness.store.windows(result.session_id)[1]
    rows = harness.store.rows(result.session_id, window_id=window2.id)
    assert [r.kind for r in rows[:2]] == ["lead_in", "user"]
    assert "x" * 3_000 in (rows[1].text or "")  # the unseen read result is carried
    assert rows[1].metadata["trigger"] == "forced"


def test_emergency_rollover_when_the_provider_counted_past_the_limit(harness: Harness) -> None:
    (harness.workspace / "a.txt").write_text("alpha\n")
    steps: list[dict[str, Any]] = [
        {"text": "a", "tool_calls": [call("read_file", path="a.txt")], "input_tokens": 8_400},
        {"text": "fresh", "input_tokens": 700},
    ]
    result = harness.run(steps)
    assert harness.seals(result.session_id) == ["emergency", None]
    rollover = next(e for e in harness.dispatches() if e.decision == "rollover")
    assert rollover.reason == "emergency"


class Refusing(ScriptedProvider):
    """Refuses the request of one step as too long, like a provider whose count of the
    request disagrees with ours."""

    def __init__(self, steps: list[dict[str, Any]], refuse_at: int, harness: Harness) -> None:
        super().__init__(load_steps(steps), name="scripted:refusing", log=harness.log)
        self.refuse_at = refuse_at
        self.refused = 0

    async def complete(
        self, request: ModelRequest, *, on_text: Callable[[str], None] | None = None
    ) -> ModelResponse:
        from ctxrelay.errors import ContextOverflowError

        if request.metadata["response_index"] == self.refuse_at and not self.refused:
            self.refused += 1
            raise ContextOverflowError("prompt is too long: 210000 tokens > 200000 maximum")
        return await super().complete(request, on_text=on_text)


def test_provider_refusal_as_too_long_rolls_over_as_emergency(harness: Harness) -> None:
    (harness.workspace / "a.txt").write_text("alpha\n")
    steps: list[dict[str, Any]] = [
        {"text": "a", "tool_calls": [call("read_file", path="a.txt")], "input_tokens": 3_000},
        {"text": "after the emergency", "input_tokens": 600},
    ]
    runtime = Runtime(harness.store, Refusing(steps, 1, harness), on_event=harness.events.append)
    result = asyncio.run(runtime.start("task", harness.config()).run())
    assert result.status == "done"
    assert harness.seals(result.session_id) == ["emergency", None]


def test_safe_pause_when_even_a_fresh_window_cannot_hold_the_request(harness: Harness) -> None:
    (harness.workspace / "huge.txt").write_text("y" * 40_000)
    steps: list[dict[str, Any]] = [
        {"text": "a", "tool_calls": [call("read_file", path="huge.txt")], "input_tokens": 1_000},
        {"text": "never"},
    ]
    result = harness.run(steps)
    assert result.status == "paused"
    assert result.reason == "too_large"
    assert result.message is not None
    assert "nothing was sent" in result.message
    assert len(harness.received()) == 1
    assert harness.seals(result.session_id) == [None]  # nothing rolled over in vain
    assert harness.store.get_session(result.session_id).status == "paused"
    # The event says what happened: a rejection, not a rollover that never took place.
    last = harness.dispatches()[-1]
    assert (last.decision, last.reason) == ("block", "too_large")
    assert not any(isinstance(e, RolloverEvent) for e in harness.events)


def test_a_task_too_large_for_any_window_is_rejected_before_any_provider_call(
    harness: Harness,
) -> None:
    result = harness.run([{"text": "never"}], task="z" * 40_000)
    assert (result.status, result.reason) == ("paused", "too_large")
    assert harness.received() == []
    (dispatch,) = harness.dispatches()
    assert dispatch.to_json() == {
        "event": "dispatch",
        "window": 1,
        "tokens": dispatch.tokens,
        "decision": "block",
        "stage": None,
        "reason": "too_large",
    }
    assert harness.seals(result.session_id) == [None]


def test_new_context_seals_after_siblings_and_opens_a_lead_in(harness: Harness) -> None:
    notes = "# Notes\ngoal: ship\nnext: tests\n"
    steps: list[dict[str, Any]] = [
        {
            "text": "checkpoint",
            "tool_calls": [call("write_file", path="context-notes.md", content=notes)],
        },
        {"text": "hand off", "tool_calls": [call("new_context"), call("slow", ms=50)]},
        {"text": "window 2 work", "input_tokens": 500},
    ]
    tools = builtin_tools()
    tools.add(Slow())
    result = harness.run(steps, tools=tools)
    assert result.status == "done"
    sid = result.session_id
    assert harness.seals(sid) == ["new_context", None]
    w1, w2 = harness.store.windows(sid)
    rows1 = harness.store.rows(sid, window_id=w1.id)
    # the slow sibling settled (its result is recorded) before the boundary
    assert [r.kind for r in rows1[-3:]] == ["tool_result", "tool_result", "boundary"]
    assert {r.metadata["name"] for r in rows1[-3:-1]} == {"new_context", "slow"}
    lead, trigger = harness.store.rows(sid, window_id=w2.id)[:2]
    assert lead.kind == "lead_in"
    assert lead.metadata["previous_window_id"] == w1.id
    assert lead.metadata["window_index"] == 2
    assert notes in (lead.text or "")
    assert "session_history" in (lead.text or "")
    assert "slow finished" in (trigger.text or "")  # the sibling's unseen result
    # what the model received in window 2 starts with the lead-in, naming both ids
    first = harness.received()[2]
    assert first["window"] == 2
    request_text = _rendered_first_message(harness, sid)
    assert w2.id in request_text
    assert w1.id in request_text


def _rendered_first_message(harness: Harness, sid: str) -> str:
    from ctxrelay.runtime._render import render_rows

    w2 = harness.store.windows(sid)[1]
    messages = render_rows(harness.store.rows(sid, window_id=w2.id))
    return "\n".join(b.text for b in messages[0].content if isinstance(b, TextBlock))


def test_a_failed_checkpoint_in_the_same_batch_still_rolls_over(harness: Harness) -> None:
    (harness.workspace / "context-notes.md").mkdir()  # the write will fail
    steps: list[dict[str, Any]] = [
        {
            "text": "both at once",
            "tool_calls": [
                call("write_file", path="context-notes.md", content="notes"),
                call("new_context"),
            ],
        },
        {"text": "repairing notes from history", "input_tokens": 400},
    ]
    result = harness.run(steps)
    assert harness.seals(result.session_id) == ["new_context", None]
    w2 = harness.store.windows(result.session_id)[1]
    lead, trigger = harness.store.rows(result.session_id, window_id=w2.id)[:2]
    assert "There is no notes file" in (lead.text or "")
    assert "(error)" in (trigger.text or "")


def test_lead_in_caps_the_notes_at_8_kib(harness: Harness) -> None:
    big = "n" * (NOTES_MAX_BYTES + 500)
    steps: list[dict[str, Any]] = [
        {"text": "w", "tool_calls": [call("write_file", path="context-notes.md", content=big)]},
        {"text": "h", "tool_calls": [call("new_context")]},
        {"text": "w2"},
    ]
    result = harness.run(steps)
    w2 = harness.store.windows(result.session_id)[1]
    lead = harness.store.rows(result.session_id, window_id=w2.id)[0]
    assert "n" * NOTES_MAX_BYTES in (lead.text or "")
    assert "n" * (NOTES_MAX_BYTES + 1) not in (lead.text or "")
    assert f"first {NOTES_MAX_BYTES:,} of {NOTES_MAX_BYTES + 500:,} bytes" in (lead.text or "")
    result_row = next(r for r in harness.rows(result.session_id) if r.kind == "tool_result")
    assert "only the first 8,192 bytes" in (result_row.text or "")


def test_new_context_is_refused_when_not_offered(harness: Harness) -> None:
    steps: list[dict[str, Any]] = [
        {"text": "h", "tool_calls": [call("new_context")]},
        {"text": "ok"},
    ]
    result = harness.run(steps, new_context="forbidden")
    assert harness.seals(result.session_id) == [None]
    res = next(r for r in harness.rows(result.session_id) if r.kind == "tool_result")
    assert res.metadata["is_error"] is True


@dataclass(frozen=True)
class Slow:
    """A test tool that sleeps; two of them in one batch must overlap."""

    name: str = "slow"
    description: str = "sleep"
    replay_safe: bool = True

    @property
    def input_schema(self) -> Mapping[str, Any]:
        return {"type": "object", "properties": {"ms": {"type": "integer"}}}

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        await asyncio.sleep(int(args.get("ms", 10)) / 1000)
        return ToolResult(f"slow finished after {args.get('ms')} ms")


class Barrier:
    """Each call waits until ``n`` calls have started: it completes only if the loop
    runs the calls of one batch concurrently (sequential calls would time out)."""

    name = "barrier"
    description = "wait for siblings"
    replay_safe = True
    input_schema: Mapping[str, Any] = {"type": "object", "properties": {}}

    def __init__(self, n: int) -> None:
        self.n = n
        self.started = 0
        self.event: asyncio.Event | None = None

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        if self.event is None:
            self.event = asyncio.Event()
        self.started += 1
        if self.started >= self.n:
            self.event.set()
        try:
            await asyncio.wait_for(self.event.wait(), timeout=5)
        except TimeoutError:
            return ToolResult("ran alone", is_error=True)
        return ToolResult("ran together")


def test_parallel_tool_calls_run_concurrently(harness: Harness) -> None:
    barrier = Barrier(3)
    tools = builtin_tools()
    tools.add(barrier)
    steps: list[dict[str, Any]] = [
        {"text": "three at once", "tool_calls": [call("barrier")] * 3},
        {"text": "done"},
    ]
    result = harness.run(steps, tools=tools)
    results = [r for r in harness.rows(result.session_id) if r.kind == "tool_result"]
    assert [r.text for r in results] == ["ran together"] * 3


def test_queued_input_is_delivered_after_the_turn_and_carried_across_windows(
    harness: Harness,
) -> None:
    steps: list[dict[str, Any]] = [
        {"text": "h", "tool_calls": [call("new_context")]},
        {"text": "first turn done in window 2"},
        {"text": "answered the queued input"},
    ]
    runtime = harness.runtime(steps)
    session = runtime.start("task", harness.config())
    session.enqueue("also add docs")
    result = asyncio.run(session.run())
    assert result.status == "done"
    rows = harness.rows(result.session_id)
    queued = [r for r in rows if r.kind == "user" and r.metadata.get("queued")]
    assert len(queued) == 1
    assert queued[0].text == "also add docs"
    w2 = harness.store.windows(result.session_id)[1]
    assert queued[0].window_id == w2.id  # delivered after the turn, in the new window
    kinds = [r.kind for r in rows if r.window_id == w2.id]
    assert kinds.index("user", 2) > kinds.index("assistant")  # after the turn's reply


def test_stop_pauses_cleanly_before_the_next_dispatch(harness: Harness) -> None:
    (harness.workspace / "a.txt").write_text("alpha\n")
    steps: list[dict[str, Any]] = [
        {"text": "a", "tool_calls": [call("read_file", path="a.txt")]},
        {"text": "b"},
    ]
    provider = ScriptedProvider(load_steps(steps), name="scripted:test", log=harness.log)

    def on_event(event: Event) -> None:
        # Stop while the first request is in flight: the loop sees it before the next.
        if isinstance(event, DispatchEvent):
            session.stop()

    runtime = Runtime(harness.store, provider, tools=builtin_tools(), on_event=on_event)
    session = runtime.start("task", harness.config())
    result = asyncio.run(session.run())
    assert result.status == "stopped"
    assert len(harness.received()) == 1
    assert harness.store.get_session(result.session_id).status == "stopped"
    resumed = harness.resume(steps, result.session_id)
    assert resumed.status == "done"
    assert [e["step"] for e in harness.received()] == [0, 1]


class Crash(BaseException):
    """Stands in for the process dying: nothing after it runs."""


class CrashingAt(ScriptedProvider):
    def __init__(self, steps: list[dict[str, Any]], at: int, harness: Harness) -> None:
        super().__init__(load_steps(steps), name="scripted:crash", log=harness.log)
        self.at = at

    async def complete(
        self, request: ModelRequest, *, on_text: Callable[[str], None] | None = None
    ) -> ModelResponse:
        if request.metadata["response_index"] == self.at:
            raise Crash
        return await super().complete(request, on_text=on_text)


def test_restart_stays_paused_never_repeats_an_advisory_nor_resurrects_queued_input(
    harness: Harness,
) -> None:
    (harness.workspace / "a.txt").write_text("alpha\n")
    runtime = Runtime(harness.store, CrashingAt(WARN_THEN_HANDOFF, 2, harness))
    session = runtime.start("task", harness.config())
    session.enqueue("queued before the crash")
    with pytest.raises(Crash):
        asyncio.run(session.run())
    sid = session.id
    # the warning was published (with its claim) before the request that crashed
    assert harness.advisories(sid) == [(1, "warning")]
    # opening it again does nothing by itself
    reopened = harness.runtime(WARN_THEN_HANDOFF).open(sid)
    assert harness.store.get_session(sid).status != "done"
    assert len(harness.received()) == 2
    result = asyncio.run(reopened.run())
    assert result.status == "done"
    assert harness.advisories(sid) == [(1, "warning"), (1, "handoff")]
    assert not any(r.metadata.get("queued") for r in harness.rows(sid))
    # the model saw steps 0,1 then, after the restart, 2,3: nothing repeated or skipped
    assert [e["step"] for e in harness.received()] == [0, 1, 2, 3]


def test_caps_pause_and_resume_with_a_higher_cap_and_cost_is_stored(harness: Harness) -> None:
    from ctxrelay.runtime import Prices

    (harness.workspace / "a.txt").write_text("alpha\n")
    prices = Prices(input=3.0, output=15.0, cache_write_5m=3.75, cache_write_1h=6.0, cache_read=0.3)
    result = harness.run(WARN_THEN_HANDOFF, max_turns=2, prices=prices)
    assert (result.status, result.reason, result.turns) == ("paused", "max_turns", 2)
    expected = (1_000 * 3.0 + 5_100 * 3.0) / 1e6
    outputs = [
        r.metadata["output_tokens"]
        for r in harness.rows(result.session_id)
        if r.kind == "assistant"
    ]
    expected += sum(outputs) * 15.0 / 1e6
    assert result.cost_usd == pytest.approx(expected)
    info = harness.store.get_session(result.session_id)
    assert info.status == "paused"
    assert info.metadata["pause_reason"] == "max_turns"
    assert info.metadata["cost_usd"] == pytest.approx(expected)
    w1 = harness.store.windows(result.session_id)[0]
    assert info.metadata["window_costs"][w1.id]["cost_usd"] == pytest.approx(expected)
    # the same cap pauses again at once; a higher one continues
    again = harness.resume(WARN_THEN_HANDOFF, result.session_id)
    assert (again.status, again.reason) == ("paused", "max_turns")
    more = harness.resume(WARN_THEN_HANDOFF, result.session_id, max_turns=10, max_cost=0.0001)
    assert (more.status, more.reason) == ("paused", "max_cost")
    done = harness.resume(WARN_THEN_HANDOFF, result.session_id, max_cost=None)
    assert done.status == "done"
    assert done.turns == 4
    assert [e["step"] for e in harness.received()] == [0, 1, 2, 3]


def test_a_cost_cap_on_an_unpriced_model_is_announced_once(harness: Harness) -> None:
    steps: list[dict[str, Any]] = [
        {"text": "a", "tool_calls": [call("list_files", path=".")]},
        {"text": "b"},
    ]
    result = harness.run(steps, max_cost=5.0)
    assert result.status == "done"  # the cap never trips at $0
    notices = [e for e in harness.events if isinstance(e, NoticeEvent)]
    assert [n.code for n in notices] == ["max_cost_unpriced"]
    assert "scripted:test" in notices[0].message
    assert isinstance(harness.events[0], StartEvent)
    assert harness.events[1] is notices[0]  # at the start, before any dispatch
    harness.events.clear()
    from ctxrelay.runtime import Prices

    prices = Prices(input=3.0, output=15.0, cache_write_5m=3.75, cache_write_1h=6.0, cache_read=0.3)
    harness.run(steps, max_cost=5.0, prices=prices)  # priced: enforceable, no notice
    harness.run(steps)  # no cap, no notice
    harness.run(steps, max_cost=0.0)  # a zero cap pauses at once: enforceable
    assert not any(isinstance(e, NoticeEvent) for e in harness.events)


def test_scripted_model_costs_nothing_without_prices(harness: Harness) -> None:
    result = harness.run([{"text": "hi", "input_tokens": 100}])
    assert result.cost_usd == 0.0
    assert harness.store.get_session(result.session_id).metadata["cost_usd"] == 0.0


def test_resume_with_a_new_message_continues_the_conversation(harness: Harness) -> None:
    steps: list[dict[str, Any]] = [{"text": "first"}, {"text": "second"}]
    result = harness.run(steps)
    again = harness.resume(steps, result.session_id, "one more thing")
    assert again.status == "done"
    assert [r.kind for r in harness.rows(result.session_id)] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]


def test_new_windows_never_create_a_flush_row(harness: Harness) -> None:
    (harness.workspace / "big.txt").write_text("x" * 3_000)
    steps: list[dict[str, Any]] = [
        {"text": "h", "tool_calls": [call("new_context")], "input_tokens": 6_500},
        {"text": "b", "tool_calls": [call("read_file", path="big.txt")], "input_tokens": 5_500},
        {"text": "end"},
    ]
    result = harness.run(steps)
    assert harness.seals(result.session_id) == ["new_context", "forced", None]
    assert "flush" not in harness.kinds(result.session_id)


def test_rollover_events_name_the_windows(harness: Harness) -> None:
    steps: list[dict[str, Any]] = [
        {"text": "h", "tool_calls": [call("new_context")]},
        {"text": "end"},
    ]
    harness.run(steps)
    rollovers = [e for e in harness.events if isinstance(e, RolloverEvent)]
    assert [(e.from_window, e.to_window, e.reason) for e in rollovers] == [(1, 2, "new_context")]


def test_stage_enum_values_match_claims() -> None:
    assert {s.value for s in Stage} == {"warning", "handoff"}


def test_tool_exceptions_become_error_results(harness: Harness) -> None:
    class Broken:
        name = "broken"
        description = "raises"
        replay_safe = True
        input_schema: Mapping[str, Any] = {"type": "object"}

        async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
            raise RuntimeError("boom")

    tools = ToolSet([*builtin_tools(), Broken()])
    result = harness.run(
        [{"text": "x", "tool_calls": [call("broken")]}, {"text": "ok"}], tools=tools
    )
    assert result.status == "done"
    res = next(r for r in harness.rows(result.session_id) if r.kind == "tool_result")
    assert res.metadata["is_error"] is True
    assert "boom" in (res.text or "")


def test_a_crashed_session_opens_paused_and_a_busy_one_is_refused(harness: Harness) -> None:
    from ctxrelay.errors import SessionBusyError

    (harness.workspace / "a.txt").write_text("alpha\n")
    runtime = Runtime(harness.store, CrashingAt(WARN_THEN_HANDOFF, 1, harness))
    session = runtime.start("task", harness.config())
    with pytest.raises(Crash):
        asyncio.run(session.run())
    assert harness.store.get_session(session.id).status == "running"  # as a kill leaves it
    reopened = harness.runtime(WARN_THEN_HANDOFF).open(session.id)
    info = harness.store.get_session(session.id)
    assert (info.status, info.metadata["pause_reason"]) == ("paused", "interrupted")
    with harness.store.dispatch_lock(session.id), pytest.raises(SessionBusyError):
        asyncio.run(reopened.run())
    assert asyncio.run(reopened.run()).status == "done"


@dataclass(frozen=True)
class Effectful:
    """A tool with effects (like bash): never run twice by a restart."""

    name: str = "effect"
    description: str = "appends to a file"
    replay_safe: bool = False

    @property
    def input_schema(self) -> Mapping[str, Any]:
        return {"type": "object", "properties": {}}

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        with (ctx.workspace / "effects.txt").open("a") as handle:
            handle.write("ran\n")
        raise Crash  # the process dies before the result is recorded


def test_an_interrupted_effectful_call_is_reported_not_rerun(harness: Harness) -> None:
    steps: list[dict[str, Any]] = [
        {
            "text": "do it",
            "tool_calls": [call("effect"), call("write_file", path="w.txt", content="w")],
        },
        {"text": "checked"},
    ]
    tools = builtin_tools()
    tools.add(Effectful())
    runtime = harness.runtime(steps, tools=tools)
    session = runtime.start("task", harness.config())
    with pytest.raises(Crash):
        asyncio.run(session.run())
    result = harness.resume(steps, session.id, tools=tools)
    assert result.status == "done"
    assert (harness.workspace / "effects.txt").read_text() == "ran\n"  # exactly once
    results = {r.metadata["name"]: r for r in harness.rows(session.id) if r.kind == "tool_result"}
    assert results["effect"].metadata["is_error"] is True
    assert "interrupted by a restart" in (results["effect"].text or "")
    assert results["write_file"].metadata["is_error"] is False


def test_streamed_text_reaches_on_text(harness: Harness) -> None:
    seen: list[str] = []
    provider = ScriptedProvider(load_steps([{"text": "hello there"}]), log=harness.log)
    runtime = Runtime(harness.store, provider, on_text=seen.append)
    asyncio.run(runtime.start("task", harness.config()).run())
    assert seen == ["hello there"]
