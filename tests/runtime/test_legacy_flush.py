"""Histories from before agent-led handoff still resume: a window holding the old ``flush``
row gets its one memory-only step (only the notes file may be written), then is sealed
``legacy_flush``. The window's rows are a fixture, as that version stored them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxrelay.runtime._legacy import notes_only
from ctxrelay.store import NewRow
from tests.runtime.helpers import Harness, call, stored_session

FIXTURE = Path(__file__).parent / "fixtures" / "legacy_flush.json"


def _rows(key: str) -> list[NewRow]:
    raw: list[dict[str, Any]] = json.loads(FIXTURE.read_text())[key]
    return [NewRow(r["kind"], r["text"], r["metadata"]) for r in raw]


def _legacy_session(harness: Harness, *, replied: bool) -> str:
    sid, wid = stored_session(harness, _rows("rows"))
    if replied:
        harness.store.append(sid, wid, _rows("replied"))
    return sid


def test_a_flush_history_runs_its_memory_only_step_then_seals(harness: Harness) -> None:
    sid = _legacy_session(harness, replied=False)
    steps: list[dict[str, Any]] = [
        {"text": "(unused: response 0 is in the history)"},
        {
            "text": "flushing",
            "tool_calls": [
                call("write_file", path="context-notes.md", content="flushed notes\n"),
                call("read_file", path="elsewhere.txt"),
            ],
        },
        {"text": "continuing in window 2", "input_tokens": 500},
    ]
    result = harness.resume(steps, sid)
    assert result.status == "done"
    assert harness.seals(sid) == ["legacy_flush", None]
    received = harness.received()
    assert received[0]["tools"] == ["write_file"]  # the memory-only step
    assert "new_context" in received[1]["tools"]  # window 2 is ordinary again
    w1, w2 = harness.store.windows(sid)
    results = [r for r in harness.store.rows(sid, window_id=w1.id) if r.kind == "tool_result"]
    assert [bool(r.metadata["is_error"]) for r in results[1:]] == [False, True]
    assert "only the notes file" in (results[2].text or "")
    lead = harness.store.rows(sid, window_id=w2.id)[0]
    assert "flushed notes" in (lead.text or "")
    assert harness.kinds(sid).count("flush") == 1


def test_a_flush_reply_already_recorded_seals_without_another_call(harness: Harness) -> None:
    sid = _legacy_session(harness, replied=True)
    steps: list[dict[str, Any]] = [{}, {}, {"text": "window 2", "input_tokens": 400}]
    result = harness.resume(steps, sid)
    assert result.status == "done"
    assert harness.seals(sid) == ["legacy_flush", None]
    assert (harness.workspace / "context-notes.md").read_text() == "legacy notes\n"
    assert [e["step"] for e in harness.received()] == [2]


def test_no_room_for_the_flush_step_seals_without_it(harness: Harness) -> None:
    rows = _rows("rows")
    # The old version counted the window right at its limit: no room for another step.
    rows[1] = NewRow(
        "assistant",
        "reading",
        {"usage": {"input_tokens": 7_990}, "context_tokens": 7_990, "request_bytes": 10},
    )
    sid, _ = stored_session(harness, rows)
    result = harness.resume([{}, {"text": "window 2", "input_tokens": 300}], sid)
    assert result.status == "done"
    assert harness.seals(sid) == ["legacy_flush", None]
    assert [e["step"] for e in harness.received()] == [1]  # only window 2 was sent


def test_the_flush_step_may_write_only_the_notes_file(tmp_path: Path) -> None:
    refuse = notes_only(tmp_path, "context-notes.md")
    assert refuse("write_file", {"path": "context-notes.md"}) is None
    assert refuse("write_file", {"path": "./context-notes.md"}) is None
    assert refuse("write_file", {"path": "app.py"}) is not None
    assert refuse("read_file", {"path": "context-notes.md"}) is not None
