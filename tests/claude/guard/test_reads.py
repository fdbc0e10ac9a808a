"""The Read calls for each printed file, with its absolute path and the same range, on
real files (line counts, byte ranges, globs), and the deny reason's page of each: the
same start, cut to the lines whose Read output fits in a page of bytes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget.bounds import PRINT_PAGE_BYTES
from ctxrelay.claude.guard._reads import CALLS_SHOWN, READ_LINE_PREFIX, read_calls
from ctxrelay.claude.guard.bash import deny_reason
from ctxrelay.hooks.guard._model import ReadCall
from ctxrelay.hooks.guard.prints import classify

_CALL = re.compile(r"Read (\{.*?\})(?: \((.*)\))?$", re.MULTILINE)


def _calls(command: str, cwd: Path) -> list[ReadCall]:
    found = classify(command, str(cwd))
    assert found, f"{command!r} prints no file"
    calls: list[ReadCall] = []
    more = 0
    for printed in dict.fromkeys(found):
        shown, extra = read_calls(printed)
        calls += shown
        more += extra
    return calls


def reads(command: str, cwd: Path) -> list[dict[str, Any]]:
    """The Read tool inputs that show what ``command`` prints, in order."""
    return [dict(c.tool_input()) for c in _calls(command, cwd)]


def notes(command: str, cwd: Path) -> list[str]:
    return [c.note for c in _calls(command, cwd)]


@pytest.fixture(autouse=True)
def _uncapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Claude Code whose Bash output cap is its largest: big prints are denied."""
    monkeypatch.setenv("BASH_MAX_OUTPUT_LENGTH", "150000")


@pytest.fixture
def ten(tmp_path: Path) -> Path:
    """A 10-line file, each line 9 characters and a newline (100 bytes)."""
    path = tmp_path / "ten.txt"
    path.write_text("".join(f"line {i:03d}\n" for i in range(1, 11)))
    return path


def test_cat_reads_the_whole_file_by_absolute_path(ten: Path) -> None:
    assert reads("cat ten.txt", ten.parent) == [{"file_path": str(ten)}]


def test_head_n_is_a_limit(ten: Path) -> None:
    assert reads("head -n 3 ten.txt", ten.parent) == [{"file_path": str(ten), "limit": 3}]
    assert reads("head ten.txt", ten.parent) == [{"file_path": str(ten), "limit": 10}]


def test_tail_n_takes_offset_and_limit_from_the_line_count(ten: Path) -> None:
    assert reads("tail -n 3 ten.txt", ten.parent) == [
        {"file_path": str(ten), "offset": 8, "limit": 3}
    ]
    assert reads("tail -1 ten.txt", ten.parent) == [
        {"file_path": str(ten), "offset": 10, "limit": 1}
    ]
    # More lines asked than the file has: all of them.
    assert reads("tail -n 50 ten.txt", ten.parent) == [
        {"file_path": str(ten), "offset": 1, "limit": 10}
    ]


def test_tail_counts_a_last_line_without_newline(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("a\nb\nc")
    assert reads("tail -n 1 f", tmp_path) == [
        {"file_path": str(tmp_path / "f"), "offset": 3, "limit": 1}
    ]


def test_tail_from_a_line_on(ten: Path) -> None:
    assert reads("tail -n +4 ten.txt", ten.parent) == [
        {"file_path": str(ten), "offset": 4, "limit": 7}
    ]


def test_sed_range_is_offset_and_limit(ten: Path) -> None:
    assert reads("sed -n '3,6p' ten.txt", ten.parent) == [
        {"file_path": str(ten), "offset": 3, "limit": 4}
    ]
    assert reads("sed -n 1,5p ten.txt", ten.parent) == [
        {"file_path": str(ten), "offset": 1, "limit": 5}
    ]
    assert reads("sed -n '$p' ten.txt", ten.parent) == [
        {"file_path": str(ten), "offset": 10, "limit": 1}
    ]
    assert reads("sed -n '5,$p' ten.txt", ten.parent) == [
        {"file_path": str(ten), "offset": 5, "limit": 6}
    ]
    assert reads("sed -n '2p;7,8p' ten.txt", ten.parent) == [
        {"file_path": str(ten), "offset": 2, "limit": 1},
        {"file_path": str(ten), "offset": 7, "limit": 2},
    ]


def test_head_all_but_the_last(ten: Path) -> None:
    assert reads("head -n -3 ten.txt", ten.parent) == [{"file_path": str(ten), "limit": 7}]


def test_byte_ranges_round_out_to_the_lines_that_hold_them(ten: Path) -> None:
    # Bytes 1-25 are lines 1-3; the last 15 bytes (86-100) are lines 9-10.
    assert reads("head -c 25 ten.txt", ten.parent) == [{"file_path": str(ten), "limit": 3}]
    assert reads("tail -c 15 ten.txt", ten.parent) == [
        {"file_path": str(ten), "offset": 9, "limit": 2}
    ]
    assert "bytes" in notes("head -c 25 ten.txt", ten.parent)[0]


def test_each_file_gets_its_own_call(ten: Path, tmp_path: Path) -> None:
    (tmp_path / "two.txt").write_text("x\ny\n")
    assert reads("tail -n 1 ten.txt two.txt", tmp_path) == [
        {"file_path": str(ten), "offset": 10, "limit": 1},
        {"file_path": str(tmp_path / "two.txt"), "offset": 2, "limit": 1},
    ]


def test_every_print_of_a_compound_command_is_named(ten: Path) -> None:
    command = "echo x && cat ten.txt; head -2 ten.txt | wc; tail -2 ten.txt"
    # head -2 is piped: not a print.
    assert reads(command, ten.parent) == [
        {"file_path": str(ten)},
        {"file_path": str(ten), "offset": 9, "limit": 2},
    ]


def test_a_missing_file_still_gets_its_call_and_the_formula(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.log")
    assert reads("cat nope.log", tmp_path) == [{"file_path": missing}]
    assert reads("tail -n 5 nope.log", tmp_path) == [{"file_path": missing}]
    (note,) = notes("tail -n 5 nope.log", tmp_path)
    assert "offset = line count - 4, limit 5" in note
    assert reads("sed -n 3,4p nope.log", tmp_path) == [
        {"file_path": missing, "offset": 3, "limit": 2}
    ]


def test_a_range_past_the_end_says_so(ten: Path) -> None:
    (note,) = notes("head -n -20 ten.txt", ten.parent)
    assert "10 lines" in note


def test_an_unknown_range_reads_the_file_with_a_note(ten: Path) -> None:
    assert reads('head -n "$N" ten.txt', ten.parent) == [{"file_path": str(ten)}]
    assert "known only when it runs" in notes('head -n "$N" ten.txt', ten.parent)[0]


def test_a_computed_operand_is_named_as_written(tmp_path: Path) -> None:
    assert reads('cat "$f"', tmp_path) == [{"file_path": "$f"}]
    assert "absolute path" in notes('cat "$f"', tmp_path)[0]


def test_globs_expand_to_their_files(tmp_path: Path) -> None:
    for name in ("b.log", "a.log", "c.txt"):
        (tmp_path / name).write_text("x\n")
    assert reads("cat *.log", tmp_path) == [
        {"file_path": str(tmp_path / "a.log")},
        {"file_path": str(tmp_path / "b.log")},
    ]
    assert reads("cat *.none", tmp_path) == [{"file_path": str(tmp_path / "*.none")}]


def test_many_files_are_capped_and_counted(tmp_path: Path) -> None:
    for i in range(CALLS_SHOWN + 7):
        (tmp_path / f"f{i:02d}.log").write_text("x\n" * 500)
    reason = deny_reason("cat *.log", str(tmp_path))
    assert reason is not None
    assert len(_CALL.findall(reason)) == CALLS_SHOWN
    assert "and 7 more" in reason


def test_a_fifo_is_never_opened(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "pipe")
    assert reads("tail -n 2 pipe", tmp_path) == [{"file_path": str(tmp_path / "pipe")}]


def _page_bytes(path: Path, offset: int, limit: int) -> int:
    lines = path.read_bytes().splitlines(keepends=True)[offset - 1 : offset - 1 + limit]
    return sum(len(line) + READ_LINE_PREFIX for line in lines)


def test_the_reason_offers_one_page_of_each_file(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_text("".join(f"request {i:05d} served\n" for i in range(2000)))  # 42 KB
    reason = deny_reason("cat app.log", str(tmp_path))
    assert reason is not None
    assert reason.startswith("ctxrelay guard: this command would print 42,000 bytes")
    assert "up to 150,000 characters whole" in reason
    (call,) = [json.loads(m.group(1)) for m in _CALL.finditer(reason)]
    assert call["file_path"] == str(log)
    assert "offset" not in call
    size = _page_bytes(log, 1, call["limit"])
    assert size <= PRINT_PAGE_BYTES < size + 21 + READ_LINE_PREFIX  # as many lines as fit
    assert "Grep" in reason


def test_the_page_of_a_tail_is_the_files_end(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_text("".join(f"request {i:05d} served\n" for i in range(2000)))
    reason = deny_reason("tail -n 1500 app.log", str(tmp_path))
    assert reason is not None
    (call,) = [json.loads(m.group(1)) for m in _CALL.finditer(reason)]
    assert call["offset"] + call["limit"] - 1 == 2000  # ends at the last line
    assert _page_bytes(log, call["offset"], call["limit"]) <= PRINT_PAGE_BYTES


def test_a_line_longer_than_a_page_gets_a_byte_page(tmp_path: Path) -> None:
    (tmp_path / "bundle.min.js").write_text("var a=1;" * 4000)  # one 32 KB line
    reason = deny_reason("head -n 1 bundle.min.js", str(tmp_path))
    assert reason is not None
    assert f"Bash head -c {PRINT_PAGE_BYTES} {tmp_path / 'bundle.min.js'}" in reason
    assert "Read {" not in reason


def test_a_repeated_print_is_named_once(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x" * 20_000)
    reason = deny_reason("cat a.txt; cat a.txt", str(tmp_path))
    assert reason is not None
    assert reason.count(str(tmp_path / "a.txt")) == 1


def test_read_call_text() -> None:
    call = ReadCall("/a b/c", 3, 4, "why")
    assert call.tool_input() == {"file_path": "/a b/c", "offset": 3, "limit": 4}
    assert str(call) == 'Read {"file_path": "/a b/c", "offset": 3, "limit": 4} (why)'
    assert str(ReadCall("/x")) == 'Read {"file_path": "/x"}'


def test_a_computed_operand_keeps_its_range(tmp_path: Path) -> None:
    assert reads('head -5 "$f"', tmp_path) == [{"file_path": "$f", "limit": 5}]
    (note,) = notes("tail -3 $f", tmp_path)
    assert "$f as an absolute path" in note
    assert "offset = line count - 2, limit 3" in note


def test_a_loop_over_files_names_each_file(tmp_path: Path) -> None:
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("x\n" * 30)
    command = 'for f in *.py notes.md; do echo "== $f"; head -20 "$f"; done'
    assert reads(command, tmp_path) == [
        {"file_path": str(tmp_path / "a.py"), "limit": 20},
        {"file_path": str(tmp_path / "b.py"), "limit": 20},
        {"file_path": str(tmp_path / "notes.md"), "limit": 20},
    ]
