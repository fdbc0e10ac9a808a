"""The Read guard: an unbounded Read of a file over READ_MAX_BYTES is denied by size."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxrelay.budget.bounds import READ_MAX_BYTES
from ctxrelay.claude.guard._reads import mib
from ctxrelay.claude.guard.read import deny_reason


def sized(path: Path, size: int) -> Path:
    with path.open("wb") as handle:
        handle.truncate(size)  # sparse: costs no disk
    return path


def test_a_file_over_the_limit_is_denied_with_offset_limit_and_grep(tmp_path: Path) -> None:
    big = sized(tmp_path / "big.bin", READ_MAX_BYTES + 1)
    reason = deny_reason({"file_path": str(big)}, str(tmp_path))
    assert reason is not None
    assert str(big) in reason
    assert mib(READ_MAX_BYTES) in reason
    assert "offset" in reason
    assert "limit" in reason
    assert "Grep" in reason


def test_the_limit_itself_is_allowed(tmp_path: Path) -> None:
    exact = sized(tmp_path / "exact.bin", READ_MAX_BYTES)
    assert deny_reason({"file_path": str(exact)}, None) is None


def test_a_small_file_is_allowed(tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text("hi\n")
    assert deny_reason({"file_path": str(tmp_path / "s.txt")}, None) is None


@pytest.mark.parametrize("bounds", [{"limit": 100}, {"offset": 1, "limit": 200}, {"pages": "1-3"}])
def test_a_bounded_read_of_a_big_file_is_allowed(tmp_path: Path, bounds: dict[str, object]) -> None:
    big = sized(tmp_path / "big.bin", READ_MAX_BYTES * 2)
    assert deny_reason({"file_path": str(big), **bounds}, None) is None


def test_an_offset_alone_is_still_unbounded(tmp_path: Path) -> None:
    big = sized(tmp_path / "big.bin", READ_MAX_BYTES * 2)
    assert deny_reason({"file_path": str(big), "offset": 10}, None) is not None


def test_a_relative_path_resolves_against_cwd(tmp_path: Path) -> None:
    sized(tmp_path / "big.bin", READ_MAX_BYTES + 1)
    reason = deny_reason({"file_path": "big.bin"}, str(tmp_path))
    assert reason is not None
    assert str(tmp_path / "big.bin") in reason


@pytest.mark.parametrize("file_path", ["", "/no/such/file", "\x00bad"])
def test_what_read_itself_will_reject_is_left_to_it(file_path: str) -> None:
    assert deny_reason({"file_path": file_path}, "/") is None


def test_directories_and_fifos_are_left_alone(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    assert deny_reason({"file_path": str(tmp_path)}, None) is None
    assert deny_reason({"file_path": str(tmp_path / "pipe")}, None) is None


def test_a_missing_or_odd_file_path_is_no_denial() -> None:
    assert deny_reason({}, None) is None
    assert deny_reason({"file_path": 5}, None) is None


def test_the_example_call_is_valid_json_for_any_path(tmp_path: Path) -> None:
    import json
    import re

    odd = sized(tmp_path / 'a "quoted" \\ name', READ_MAX_BYTES + 1)
    reason = deny_reason({"file_path": str(odd)}, None)
    assert reason is not None
    match = re.search(r"Read (\{.*?\})\)", reason)
    assert match is not None
    assert json.loads(match.group(1)) == {"file_path": str(odd), "offset": 1, "limit": 200}
