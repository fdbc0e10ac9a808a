"""``read_result_since``: a Read's result after a byte offset, and no compaction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay import transcripts
from ctxrelay.transcripts import read_result_since


def _line(record: dict[str, object]) -> str:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n"


def _result(path: str) -> str:
    return _line({"type": "user", "toolUseResult": {"type": "text", "file": {"filePath": path}}})


def test_a_result_after_the_offset_counts_and_one_before_does_not(tmp_path: Path) -> None:
    t = tmp_path / "t.jsonl"
    t.write_text(_result("/p/a.txt"))
    start = t.stat().st_size
    assert read_result_since(str(t), 0, "/p/a.txt") is True
    assert read_result_since(str(t), start, "/p/a.txt") is False
    with t.open("a") as f:
        f.write(_result("/p/ü.txt"))  # written as UTF-8, as Claude Code writes it
    assert read_result_since(str(t), start, "/p/ü.txt") is True
    assert read_result_since(str(t), start, "/p/a.txt") is False


def test_a_compaction_since_means_no(tmp_path: Path) -> None:
    t = tmp_path / "t.jsonl"
    t.write_text(_result("/p/a.txt") + _line({"type": "system", "subtype": "compact_boundary"}))
    assert read_result_since(str(t), 0, "/p/a.txt") is False


def test_what_it_cannot_tell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert transcripts.SINCE_MAX_BYTES == 64 * 1024 * 1024  # the guard's docs say 64 MiB
    t = tmp_path / "t.jsonl"
    t.write_text(_result("/p/a.txt"))
    assert read_result_since(str(tmp_path / "missing.jsonl"), 0, "/p/a.txt") is None
    assert read_result_since(str(t), t.stat().st_size + 1, "/p/a.txt") is None
    monkeypatch.setattr("ctxrelay.transcripts._since.SINCE_MAX_BYTES", 10)
    assert read_result_since(str(t), 0, "/p/a.txt") is None


def _segment(path: Path, base: dict[str, object] | None, *calls: str) -> None:
    """A Codex 0.171 rollout segment: its ``session_meta`` (with the ``history_base`` a
    rewind names), then a ``function_call_output`` line per call."""
    meta: dict[str, object] = {"id": "t", "session_id": "t"}
    if base is not None:
        meta["history_base"] = base
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [_line({"type": "session_meta", "payload": meta})]
    lines += [
        _line({"type": "response_item", "payload": {"type": "function_call_output", "call_id": c}})
        for c in calls
    ]
    path.write_text("".join(lines))


def test_a_rewound_segment_holds_the_kept_part_of_the_one_before(tmp_path: Path) -> None:
    thread = "01a23c2f-b6c9-7d83-ace0-ae043c020cd0"
    seg2, seg3 = "01a23c30-3ce9-70e1-9884-9dd599154b70", "01a23c30-9bdd-73d2-a97b-c1d531b25016"
    sessions = tmp_path / "sessions"
    first = sessions / "2026/12/02" / f"rollout-2026-12-02T23-59-00-{thread}.jsonl"
    _segment(first, None, "call_a", "call_b")
    # A rewind to the first prompt: nothing kept.
    second = sessions / "2026/12/03" / f"rollout-2026-12-03T00-01-00-{thread}_{seg2}.jsonl"
    _segment(second, None, "call_c")
    assert transcripts.call_in_rollout(str(second), "call_a") is False
    # A rewind to a later prompt keeps the first segment up to the end of call_a's line
    # (in another day's folder).
    kept = first.read_text().index('"call_b"')
    kept = first.read_text().rindex("\n", 0, kept) + 1
    third = sessions / "2026/12/03" / f"rollout-2026-12-03T00-02-00-{thread}_{seg3}.jsonl"
    _segment(third, {"thread_id": thread, "end_byte_offset": kept}, "call_d")
    assert transcripts.call_in_rollout(str(third), "call_d") is True
    assert transcripts.call_in_rollout(str(third), "call_a") is True  # kept
    assert transcripts.call_in_rollout(str(third), "call_b") is False  # rewound
    assert transcripts.call_in_rollout(str(third), "call_c") is False  # another branch
    # Two rewinds deep: a segment continuing the third.
    fourth = sessions / "2026/12/03" / f"rollout-2026-12-03T00-03-00-{thread}_x4.jsonl"
    size = third.stat().st_size
    _segment(fourth, {"thread_id": seg3, "end_byte_offset": size}, "call_e")
    assert transcripts.call_in_rollout(str(fourth), "call_a") is True
    assert transcripts.call_in_rollout(str(fourth), "call_d") is True
    # A segment it cannot find: it cannot tell.
    lost = sessions / "2026/12/03" / f"rollout-2026-12-03T00-04-00-{thread}_x5.jsonl"
    _segment(lost, {"thread_id": "gone", "end_byte_offset": 10}, "call_f")
    assert transcripts.call_in_rollout(str(lost), "call_a") is None
