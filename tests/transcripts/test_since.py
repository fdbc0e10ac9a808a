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
