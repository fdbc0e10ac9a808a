"""The conformance suite every integration passes: the same policy at the same
dispatches as the runtime, over real HTTP from the framework's own loop.

Each test runs the real framework package against a local wire server with scripted
steps, and checks what the server received (the requests the framework sent) and what
the store holds. Budget: a 200k window with a 32k reserve at slider 60, so the warning is
due at 100,000 tokens, the handoff request at 120,000, and the usable limit is 168,000.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget import Budget, Stage, evaluate
from ctxrelay.integrations import DispatchBlockedError
from ctxrelay.runtime.events import DispatchEvent, Event
from ctxrelay.store import Store, open_store
from ctxrelay.testing import Fault, Step, ToolUse, estimate_tokens
from tests.integrations.harness import Harness, WireServer

BUDGET = Budget(limit=200_000, output_reserve=32_000, threshold=60)
DECISION = "Decisions: output keys are exactly id, title, done (stable order)."
NOTES = f"# Notes\n\nGoal: add --json.\n\n{DECISION}\n\nNext: README.\n"
PROJECT = Path(__file__).resolve().parents[2]


def _bodies(server: WireServer) -> list[str]:
    return [json.dumps(r.body, ensure_ascii=False) for r in server.requests if r.body]


def _run(
    harness: Harness,
    store: Store,
    workspace: Path,
    steps: list[Step],
    *,
    session_id: str = "s1",
    budget: Budget = BUDGET,
    prompt: str = "Add a --json flag to todo list.",
    stream: bool = False,
) -> tuple[WireServer, list[Event], Any]:
    events: list[Event] = []
    integration = harness.open(
        store, session_id=session_id, budget=budget, workspace=workspace, on_event=events.append
    )
    with harness.server(steps) as server:
        asyncio.run(harness.run(integration, server, prompt, stream=stream))
    return server, events, integration


def _handoff_steps() -> list[Step]:
    return [
        Step(
            text="Reading.",
            tool_calls=[ToolUse("read_file", {"path": "README.md"})],
            input_tokens=20_000,
        ),
        Step(
            text="Notes.",
            tool_calls=[
                ToolUse("write_file", {"path": "context-notes.md", "content": "# Notes\n"})
            ],
            input_tokens=105_000,
        ),
        Step(
            text="More.",
            tool_calls=[ToolUse("read_file", {"path": "todo.py"})],
            input_tokens=125_000,
        ),
        Step(
            text="Checkpoint.",
            tool_calls=[ToolUse("write_file", {"path": "context-notes.md", "content": NOTES})],
            input_tokens=126_000,
        ),
        Step(
            text="Confirmed; handing off.",
            tool_calls=[ToolUse("new_context")],
            input_tokens=127_000,
        ),
        Step(
            text="What did window 1 decide?",
            tool_calls=[ToolUse("session_history", {"action": "search", "query": "Decisions"})],
            input_tokens=9_000,
        ),
        Step(text="Done.", input_tokens=10_000),
    ]


@pytest.mark.parametrize("stream", [False, True], ids=["run", "streamed"])
def test_advisories_at_the_dispatches_the_policy_names(
    harness: Harness, store: Store, workspace: Path, stream: bool
) -> None:
    server, events, _ = _run(harness, store, workspace, _handoff_steps(), stream=stream)
    dispatches = [e for e in events if isinstance(e, DispatchEvent)]
    # The policy core, asked with the same estimates and the claims so far, names the
    # same decision at every dispatch (and the same stage).
    claimed: set[Stage] = set()
    for event in dispatches[:5]:
        decision = evaluate(BUDGET, event.tokens, claimed=frozenset(claimed))
        assert decision.action.value == event.decision, event
        if decision.stage is not None:
            assert event.stage == decision.stage.value
            claimed.add(decision.stage)
    assert [(d.decision, d.stage) for d in dispatches[:5]] == [
        ("continue", None),
        ("continue", None),
        ("warn", "warning"),
        ("warn", "handoff"),
        ("continue", None),
    ]
    rows = store.rows("s1")
    warnings = [r for r in rows if r.kind == "warning"]
    assert [r.metadata["stage"] for r in warnings] == ["warning", "handoff"]
    bodies = _bodies(server)
    assert warnings[0].text is not None
    assert warnings[1].text is not None
    warning_json = json.dumps(warnings[0].text, ensure_ascii=False)[1:-1]
    handoff_json = json.dumps(warnings[1].text, ensure_ascii=False)[1:-1]
    assert [warning_json in b for b in bodies[:5]] == [False, False, True, True, True]
    assert [handoff_json in b for b in bodies[:5]] == [False, False, False, True, True]


def test_new_context_opens_a_fresh_window_with_the_lead_in(
    harness: Harness, store: Store, workspace: Path
) -> None:
    server, _events, _integration = _run(harness, store, workspace, _handoff_steps())
    windows = store.windows("s1")
    assert [(w.index, w.seal_reason) for w in windows] == [(1, "new_context"), (2, None)]
    # The notes write was confirmed (its result is in window 1) before new_context.
    w1 = store.rows("s1", window_id=windows[0].id)
    results = [r for r in w1 if r.kind == "tool_result"]
    assert results[-2].metadata["name"] == "write_file"
    assert not results[-2].metadata["is_error"]
    assert results[-1].metadata["name"] == "new_context"
    assert (workspace / "context-notes.md").read_text() == NOTES
    first = _bodies(server)[5]
    assert f"This is context window 2 (id {windows[1].id})" in first
    assert f"The previous window was {windows[0].id} (sealed: new_context)" in first
    assert json.dumps(DECISION)[1:-1] in first  # the notes, carried
    assert "session_history" in first
    # Nothing of window 1 is sent again: not the task, not its tool results.
    assert "Add a --json flag" not in first
    assert "A tiny task list" not in first
    assert "Context warning" not in first


def test_session_history_finds_a_decision_of_window_one(
    harness: Harness, store: Store, workspace: Path
) -> None:
    server, _, _ = _run(harness, store, workspace, _handoff_steps())
    answer = _bodies(server)[6]
    assert "window 1" in answer
    assert json.dumps(DECISION)[1:-1] in answer
    w2 = store.windows("s1")[1]
    result = next(r for r in store.rows("s1", window_id=w2.id) if r.kind == "tool_result")
    assert result.metadata["name"] == "session_history"
    assert result.text is not None
    assert DECISION in result.text


def test_forced_rollover_never_sends_an_oversized_request(
    harness: Harness, store: Store, workspace: Path
) -> None:
    steps = [
        Step(
            text="Reading the log.",
            tool_calls=[ToolUse("read_file", {"path": "big.log"})],
            input_tokens=150_000,
        ),
        Step(text="Window 2 goes on.", input_tokens=30_000),
    ]
    server, events, _ = _run(harness, store, workspace, steps)
    windows = store.windows("s1")
    assert [(w.index, w.seal_reason) for w in windows] == [(1, "forced"), (2, None)]
    dispatches = [e for e in events if isinstance(e, DispatchEvent)]
    assert dispatches[1].decision == "rollover"
    assert dispatches[1].tokens > BUDGET.usable_limit
    bodies = _bodies(server)
    assert len(bodies) == 2
    second = bodies[1]
    assert f"This is context window 2 (id {windows[1].id})" in second
    assert "rolled over (forced)" in second
    assert "Add a --json flag" not in second
    # What was sent fits: the local server's own count of the request stays under.
    for request in server.requests:
        assert estimate_tokens(request.body) < BUDGET.usable_limit


def test_slider_off_blocks_with_nothing_sent(
    harness: Harness, store: Store, workspace: Path
) -> None:
    off = Budget(limit=200_000, output_reserve=32_000, threshold=100)
    steps = [
        Step(
            text="Reading the log.",
            tool_calls=[ToolUse("read_file", {"path": "big.log"})],
            input_tokens=150_000,
        ),
        Step(text="never sent"),
    ]
    events: list[Event] = []
    integration = harness.open(
        store, session_id="off", budget=off, workspace=workspace, on_event=events.append
    )
    with harness.server(steps) as server:
        with pytest.raises(DispatchBlockedError, match="nothing was sent"):
            asyncio.run(harness.run(integration, server, "Read the log."))
        assert len(server.requests) == 1
    assert [e.decision for e in events if isinstance(e, DispatchEvent)] == ["continue", "block"]
    assert store.windows("off")[0].seal_reason is None


def test_parallel_calls_settle_before_the_seal(
    harness: Harness, store: Store, workspace: Path
) -> None:
    steps = [
        Step(
            text="Notes first.",
            tool_calls=[ToolUse("write_file", {"path": "context-notes.md", "content": NOTES})],
            input_tokens=20_000,
        ),
        Step(
            text="Hand off, and read one more file.",
            tool_calls=[ToolUse("read_file", {"path": "todo.py"}), ToolUse("new_context")],
            input_tokens=30_000,
        ),
        Step(text="Done.", input_tokens=5_000),
    ]
    server, _, _ = _run(harness, store, workspace, steps, stream=True)
    windows = store.windows("s1")
    assert windows[0].seal_reason == "new_context"
    w1 = store.rows("s1", window_id=windows[0].id)
    assert {r.metadata["name"] for r in w1 if r.kind == "tool_result"} == {
        "write_file",
        "read_file",
        "new_context",
    }
    first = _bodies(server)[2]
    assert "Input from the other tool calls of that step" in first
    assert "def main()" in first


def test_a_retried_request_carries_its_advisory_once(
    harness: Harness, store: Store, workspace: Path
) -> None:
    steps = [
        Step(
            text="Reading.",
            tool_calls=[ToolUse("read_file", {"path": "README.md"})],
            input_tokens=105_000,
        ),
        Step(fault=Fault.http(500, "try again")),
        Step(text="Done.", input_tokens=106_000),
    ]
    server, _events, _ = _run(harness, store, workspace, steps)
    bodies = _bodies(server)
    assert len(bodies) == 3  # the framework's client retried the failed request
    assert bodies[1] == bodies[2]
    rows = store.rows("s1")
    assert [r.metadata["stage"] for r in rows if r.kind == "warning"] == ["warning"]
    assert bodies[2].count("Context warning") == 1


_CHILD = """
import asyncio, json, os, sys
from pathlib import Path
from ctxrelay.integrations._relay import Relay
from ctxrelay.runtime.tools import ToolResult
from ctxrelay.store import open_store
from ctxrelay.testing import OpenAIServer
from tests.integrations.harness import HARNESSES
from tests.integrations.test_conformance import BUDGET

class Crash:
    name = "crash"
    description = "stop"
    replay_safe = True
    input_schema = {"type": "object", "properties": {}}
    async def run(self, args, ctx):
        os._exit(17)

args = json.loads(sys.argv[1])
harness = next(h for h in HARNESSES if h.name == args["harness"])
store = open_store(args["db"])
integration = harness.open(store, session_id="s1", budget=BUDGET, workspace=Path(args["ws"]))
harness.add_tool(integration, Crash())

class Remote:
    base_url = args["base_url"]

asyncio.run(harness.run(integration, Remote(), "Read the README."))
"""


def test_kill_and_resume_repeats_no_advisory(
    harness: Harness, tmp_path: Path, workspace: Path
) -> None:
    db = str(tmp_path / "kill.db")
    steps = [
        Step(
            text="Reading.",
            tool_calls=[ToolUse("read_file", {"path": "README.md"})],
            input_tokens=105_000,
        ),
        Step(text="Crashing.", tool_calls=[ToolUse("crash")], input_tokens=106_000),
        Step(text="Resumed and done.", input_tokens=107_000),
    ]
    with harness.server(steps) as server:
        base_url = server.base_url
        arg = json.dumps(
            {"harness": harness.name, "db": db, "ws": str(workspace), "base_url": base_url}
        )
        env = {**os.environ, "PYTHONPATH": str(PROJECT)}
        child = subprocess.run(
            [sys.executable, "-c", _CHILD, arg],
            cwd=PROJECT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert child.returncode == 17, child.stderr
        assert len(server.requests) == 2
        store = open_store(db)
        try:
            assert [r.metadata["stage"] for r in store.rows("s1") if r.kind == "warning"] == [
                "warning"
            ]
            events: list[Event] = []
            integration = harness.open(
                store,
                session_id="s1",
                budget=BUDGET,
                workspace=workspace,
                on_event=events.append,
            )
            asyncio.run(harness.run(integration, server, "Go on."))
            assert [e.kind for e in events if e.kind == "advisory"] == []
            rows = store.rows("s1")
        finally:
            store.close()
        assert [r.metadata["stage"] for r in rows if r.kind == "warning"] == ["warning"]
        resumed = _bodies(server)[2]
        assert resumed.count("Context warning") == 1  # the window's own, not a new one
        assert "crash was interrupted by a restart" in resumed
        assert "A tiny task list" in resumed  # the same window goes on
