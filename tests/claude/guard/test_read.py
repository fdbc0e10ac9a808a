"""The Read guard's pieces in-process: the span and the bytes a Read shows, and what it
leaves to Read itself. The room rule and the re-read rule run through the hook process
(``test_hook_process.py``, ``test_reread.py``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxrelay.claude.guard._reads import READ_LINE_PREFIX
from ctxrelay.claude.guard.read import deny_reason, read_span
from tests.claude.guard._payloads import read


@pytest.fixture
def ten(tmp_path: Path) -> Path:
    path = tmp_path / "ten.txt"
    path.write_text("".join(f"line {i:03d}\n" for i in range(1, 11)))  # 9 bytes a line
    return path


@pytest.mark.parametrize(
    ("bounds", "span"),
    [
        ({}, (1, -1, 10)),
        ({"offset": 1}, (1, -1, 10)),
        ({"limit": 1_000_000}, (1, -1, 10)),
        ({"offset": 3, "limit": 4}, (3, 6, 4)),
        ({"offset": 8, "limit": 3}, (8, -1, 3)),  # reaches the end: to the end
        ({"offset": 8}, (8, -1, 3)),
        ({"offset": 0, "limit": 2}, (1, 2, 2)),
    ],
)
def test_the_span_and_bytes_of_a_read(
    ten: Path, bounds: dict[str, int], span: tuple[int, int, int]
) -> None:
    first, last, lines = span
    got = read_span(str(ten), ten.stat().st_size, bounds)
    assert got == (first, last, lines * (9 + READ_LINE_PREFIX))


def test_an_unterminated_last_line_counts(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_text("a\nb")
    assert read_span(str(path), 3, {}) == (1, -1, 3 + 2 * READ_LINE_PREFIX)


def test_without_the_hooks_payload_nothing_is_checked(ten: Path) -> None:
    assert deny_reason({"file_path": str(ten)}, None) is None


def test_what_read_itself_handles_is_left_to_it(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "dir").mkdir()
    for name in ("pipe", "dir", "missing"):
        payload = read(str(tmp_path / name), str(tmp_path))
        assert deny_reason(payload["tool_input"], str(tmp_path), payload) is None
    pdf = read(str(tmp_path / "doc.pdf"), str(tmp_path), pages="1-3")
    assert deny_reason(pdf["tool_input"], str(tmp_path), pdf) is None
