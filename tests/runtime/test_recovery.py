"""Histories written by older versions or torn by a crash resume without a second
rollover; a manual reset is a privacy floor. (The legacy final flush: test_legacy_flush.)"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ctxrelay.runtime import reset_session
from ctxrelay.runtime.tools import ToolContext, builtin_tools
from ctxrelay.store import NewRow
from tests.runtime.helpers import Harness, call, stored_session


def test_torn_boundary_finishes_one_rollover(harness: Harness) -> None:
    sid, _ = stored_session(
        harness,
        [
            NewRow("user", "task"),
            NewRow("assistant", "working"),
            NewRow("boundary", "sealed", {"reason": "forced"}),
        ],
    )
    result = harness.resume([{}, {"text": "window 2 goes on", "input_tokens": 300}], sid)
    assert result.status == "done"
    assert harness.seals(sid) == ["forced", None]
    w2 = harness.store.windows(sid)[1]
    assert [r.kind for r in harness.store.rows(sid, window_id=w2.id)] == [
        "lead_in",
        "user",
        "assistant",
    ]


def test_sealed_window_without_its_opening_rows_is_repaired_not_rolled_again(
    harness: Harness,
) -> None:
    sid, wid = stored_session(harness, [NewRow("user", "task"), NewRow("assistant", "x")])
    harness.store.rollover(
        sid, wid, "new_context", boundary=NewRow("boundary", "sealed"), opening=[]
    )
    result = harness.resume([{}, {"text": "window 2", "input_tokens": 300}], sid)
    assert result.status == "done"
    assert harness.seals(sid) == ["new_context", None]
    w2 = harness.store.windows(sid)[1]
    kinds = [r.kind for r in harness.store.rows(sid, window_id=w2.id)]
    assert kinds == ["lead_in", "user", "assistant"]


def test_manual_reset_is_a_privacy_floor(harness: Harness) -> None:
    steps: list[dict[str, Any]] = [
        {
            "text": "secret",
            "tool_calls": [call("write_file", path="context-notes.md", content="SECRET-42")],
        },
        {"text": "stored SECRET-42"},
        {
            "text": "looking back",
            "tool_calls": [
                call("session_history", action="search", query="SECRET-42"),
                call("session_history", action="list"),
            ],
        },
        {"text": "nothing before the reset"},
    ]
    result = harness.run(steps)
    sid = result.session_id
    window = reset_session(harness.store, sid)
    assert window.index == 2
    assert harness.seals(sid) == ["manual_reset", None]
    lead = harness.store.rows(sid, window_id=window.id)[0]
    assert lead.kind == "lead_in"
    assert "SECRET-42" not in (lead.text or "")
    again = harness.resume(steps, sid, "start over")
    assert again.status == "done"
    search, listing = [
        r for r in harness.store.rows(sid, window_id=window.id) if r.kind == "tool_result"
    ]
    assert search.text == "no rows of earlier windows contain 'SECRET-42'"
    assert "window 1" not in (listing.text or "")
    assert "window 2" in (listing.text or "")


def test_session_history_reads_earlier_windows_of_this_session_only(
    harness: Harness, tmp_path: Path
) -> None:
    steps: list[dict[str, Any]] = [
        {"text": "marker-window-one", "tool_calls": [call("new_context")]},
        {
            "text": "looking",
            "tool_calls": [
                call("session_history", action="search", query="marker-window-one"),
                call("session_history", action="read", window=1, offset=0, limit=3),
            ],
        },
        {"text": "ok"},
    ]
    other = harness.run([{"text": "marker-window-one in another session"}])
    result = harness.run(steps)
    assert other.session_id != result.session_id
    results = [r for r in harness.rows(result.session_id) if r.kind == "tool_result"][1:]
    search, read = results
    assert "window 1" in (search.text or "")
    assert "another session" not in (search.text or "")
    assert "[seq 1] user: do the task" in (read.text or "")


def test_session_history_steps_over_tool_call_only_responses(harness: Harness) -> None:
    # A response with tool calls and no text is stored as an assistant row with text "";
    # on SQLite such a row once made both search and read fail.
    steps: list[dict[str, Any]] = [
        {"tool_calls": [call("list_files", path=".")]},
        {"text": "marker-one", "tool_calls": [call("new_context")]},
        {
            "tool_calls": [
                call("session_history", action="search", query="marker-one"),
                call("session_history", action="read", window=1),
            ],
        },
        {"text": "done"},
    ]
    result = harness.run(steps)
    assert result.status == "done"
    first = harness.store.windows(result.session_id)[0]
    assert "" in [r.text for r in harness.store.rows(result.session_id, window_id=first.id)]
    search, read = [r for r in harness.rows(result.session_id) if r.kind == "tool_result"][-2:]
    assert not search.metadata.get("is_error"), search.text
    assert not read.metadata.get("is_error"), read.text
    assert "marker-one" in (search.text or "")
    assert "[seq 1] user: do the task" in (read.text or "")


def test_tool_context_carries_the_session(harness: Harness) -> None:
    seen: list[ToolContext] = []

    class Probe:
        name = "probe"
        description = "records its context"
        replay_safe = True
        input_schema = {"type": "object"}  # noqa: RUF012

        async def run(self, args: Any, ctx: ToolContext) -> Any:
            from ctxrelay.runtime.tools import ToolResult

            seen.append(ctx)
            return ToolResult("ok")

    tools = builtin_tools()
    tools.add(Probe())
    result = harness.run([{"text": "p", "tool_calls": [call("probe")]}, {"text": "e"}], tools=tools)
    (ctx,) = seen
    assert ctx.session_id == result.session_id
    assert ctx.window_index == 1
    assert ctx.workspace == harness.workspace.resolve()

    async def confirmed() -> bool:
        return await ctx.confirm("anything")

    assert asyncio.run(confirmed()) is True


def test_a_reset_made_by_the_store_cli_gets_its_lead_in_on_the_next_message(
    harness: Harness,
) -> None:
    steps: list[dict[str, Any]] = [{"text": "first"}, {"text": "after the reset"}]
    result = harness.run(steps)
    window = harness.store.reset(result.session_id)  # as `ctxrelay sessions reset` does
    again = harness.resume(steps, result.session_id, "new start")
    assert again.status == "done"
    rows = harness.store.rows(result.session_id, window_id=window.id)
    assert [r.kind for r in rows] == ["lead_in", "user", "assistant"]
    assert "reset by the user" in (rows[0].text or "")
    assert harness.seals(result.session_id) == ["manual_reset", None]
