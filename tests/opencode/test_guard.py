"""The OpenCode guard on ``bash`` and ``read``: the byte model of what OpenCode hands
the model (its last 50 KB of a longer output), the bounded alternative in the reason,
and the re-read rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget.bounds import OPENCODE_OUTPUT_MAX_BYTES, PRINT_BIG_BYTES
from ctxrelay.opencode._state import forget_reads
from ctxrelay.opencode.guard import HOST_OUTPUT, deny_reason, record_read
from ctxrelay.opencode.setup.probe import sample_payload


@pytest.fixture(autouse=True)
def _state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))


def _bash(root: Path, command: str, **args: str) -> dict[str, Any]:
    payload = sample_payload("tool.execute.before", root, command)
    payload["args"] |= args
    return payload


def _read(root: Path, **args: object) -> dict[str, Any]:
    payload = sample_payload("tool.execute.before", root)
    payload |= {"tool": "read", "args": args}
    return payload


def _lines(n: int) -> str:
    return "".join(f"line {i:06d} " + "x" * 40 + "\n" for i in range(n))


def test_a_300_kb_cat_is_denied_with_a_page_and_a_search(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text(_lines(6000))
    reason = deny_reason(_bash(tmp_path, "cat big.txt"))
    assert reason is not None
    assert "318,000 bytes" in reason
    assert f"get {OPENCODE_OUTPUT_MAX_BYTES:,} of them" in reason
    assert f"filePath {tmp_path / 'big.txt'}, offset 1 and limit 75" in reason
    assert "head -c 4000" in reason
    assert "grep -n PATTERN" in reason


def test_what_opencode_hands_the_model_small_passes(tmp_path: Path) -> None:
    (tmp_path / "small.txt").write_text(_lines(100))  # 5,300 bytes
    assert not HOST_OUTPUT.floods(5_300)
    assert deny_reason(_bash(tmp_path, "cat small.txt")) is None
    (tmp_path / "big.txt").write_text(_lines(6000))
    assert deny_reason(_bash(tmp_path, "head -n 50 big.txt")) is None
    assert deny_reason(_bash(tmp_path, "cat nothere.txt")) is None


def test_the_workdir_is_where_the_command_runs(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "big.txt").write_text(_lines(6000))
    assert deny_reason(_bash(tmp_path, "cat big.txt", workdir="sub")) is not None
    assert deny_reason(_bash(tmp_path, "cat big.txt")) is None
    assert deny_reason(_bash(tmp_path, "cd sub && cat big.txt")) is not None


def test_with_the_guard_the_model_never_gets_more(tmp_path: Path) -> None:
    for n in (10, 200, 1000, 6000, 40_000):
        (tmp_path / "f.txt").write_text(_lines(n))
        size = n * 53
        reason = deny_reason(_bash(tmp_path, "cat f.txt"))
        got = len(reason.encode()) if reason else HOST_OUTPUT.delivered(size)
        assert got <= max(HOST_OUTPUT.delivered(size), PRINT_BIG_BYTES)


def test_a_big_read_is_left_to_opencodes_own_cap(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text(_lines(6000))
    assert deny_reason(_read(tmp_path, filePath="big.txt")) is None


def test_a_whole_file_read_again_unchanged_is_denied(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text(_lines(50))
    for first in (_read(tmp_path, filePath=str(notes)), _bash(tmp_path, "cat notes.txt")):
        assert deny_reason(first) is None
        record_read(first)
        for again in (_read(tmp_path, filePath="notes.txt"), _bash(tmp_path, "cat notes.txt")):
            assert "you already read" in (deny_reason(again) or "")
        assert deny_reason(_read(tmp_path, filePath="notes.txt", offset=10, limit=5)) is None
        forget_reads(str(first["session_id"]))  # a compaction: the content is gone
        assert deny_reason(_read(tmp_path, filePath="notes.txt")) is None
    record_read(_read(tmp_path, filePath="notes.txt"))
    notes.write_text(_lines(51))
    assert deny_reason(_read(tmp_path, filePath="notes.txt")) is None


def test_a_part_of_a_big_file_read_is_not_a_whole_read(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text(_lines(6000))
    record_read(_read(tmp_path, filePath="big.txt"))
    assert deny_reason(_read(tmp_path, filePath="big.txt")) is None


def test_other_tools_and_bad_payloads_pass(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text(_lines(6000))
    payload = _bash(tmp_path, "cat big.txt")
    assert deny_reason(payload | {"tool": "edit"}) is None
    assert deny_reason(payload | {"args": "cat big.txt"}) is None
    assert deny_reason(payload | {"directory": "relative"}) is None
    assert deny_reason(payload | {"args": {"command": 7}}) is None
