"""The same session on SQLite and PostgreSQL: the loop only speaks the Store Protocol."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ctxrelay.runtime import Runtime, SessionConfig
from ctxrelay.runtime.events import DispatchEvent, Event
from ctxrelay.runtime.providers.scripted import ScriptedProvider, load_steps
from ctxrelay.store import open_store
from tests.runtime.helpers import SMALL, call

STEPS: list[dict[str, Any]] = [
    {"text": "a", "tool_calls": [call("read_file", path="a.txt")], "input_tokens": 1_000},
    {"text": "b", "tool_calls": [call("read_file", path="a.txt")], "input_tokens": 5_100},
    {
        "text": "c",
        "tool_calls": [call("write_file", path="context-notes.md", content="notes")],
        "input_tokens": 6_100,
    },
    {"text": "d", "tool_calls": [call("new_context")], "input_tokens": 6_300},
    {
        "text": "e",
        "tool_calls": [call("session_history", action="search", query="notes")],
        "input_tokens": 700,
    },
    {"text": "done", "input_tokens": 900},
]


def test_a_session_runs_and_resumes_alike_on_each_backend(
    store_target: str, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    events: list[Event] = []
    store = open_store(store_target)
    try:
        runtime = Runtime(store, ScriptedProvider(load_steps(STEPS)), on_event=events.append)
        session = runtime.start("task", SessionConfig(budget=SMALL, workspace=ws, max_turns=3))
        first = asyncio.run(session.run())
        assert (first.status, first.reason) == ("paused", "max_turns")
        again = runtime.open(session.id, max_turns=None)
        result = asyncio.run(again.run())
        assert result.status == "done"
        decisions = [
            (e.window, e.decision, e.stage) for e in events if isinstance(e, DispatchEvent)
        ]
        assert decisions == [
            (1, "continue", None),
            (1, "continue", None),
            (1, "warn", "warning"),
            (1, "warn", "handoff"),
            (2, "continue", None),
            (2, "continue", None),
        ]
        assert [w.seal_reason for w in store.windows(session.id)] == ["new_context", None]
        history = [r for r in store.rows(session.id) if r.kind == "tool_result"][-1]
        assert "notes" in (history.text or "")
        assert store.get_session(session.id).status == "done"
    finally:
        store.close()
