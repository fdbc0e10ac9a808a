"""What cat, head, tail and sed -n print, from their arguments (no parser, no files)."""

from __future__ import annotations

import pytest

from ctxrelay.hooks.guard._commands import PRINTERS, UNKNOWN_OPTION, Plan, plan
from ctxrelay.hooks.guard._model import WHOLE_FILE, LineRange
from ctxrelay.hooks.guard.prints import PRECHECK_WORDS, might_print_file


def test_the_precheck_knows_every_program_the_guard_reads() -> None:
    assert set(PRECHECK_WORDS) == PRINTERS
    for program in PRINTERS:
        assert might_print_file(f"{program} x")


@pytest.mark.parametrize(
    ("args", "files"),
    [
        (["a"], (0,)),
        (["-n", "a", "b"], (1, 2)),
        (["a", "-A"], (0,)),  # GNU permutes options after operands
        (["--", "-n"], (1,)),  # after "--" a dash word is a file
        (["-", "a"], (1,)),  # "-" is stdin
        (["/dev/null", "/proc/cpuinfo", "/sys/x", "a"], (3,)),
        ([], ()),
    ],
)
def test_cat_prints_each_file_operand_whole(args: list[str], files: tuple[int, ...]) -> None:
    assert plan("cat", args) == Plan(files, (WHOLE_FILE,))


def test_cat_help_prints_no_file() -> None:
    assert plan("cat", ["--help"]) is None


@pytest.mark.parametrize(
    ("args", "ranges"),
    [
        (["f"], (LineRange(None, 10),)),
        (["-n", "5", "f"], (LineRange(None, 5),)),
        (["-n5", "f"], (LineRange(None, 5),)),
        (["-5", "f"], (LineRange(None, 5),)),
        (["--lines=7", "f"], (LineRange(None, 7),)),
        (["--lines", "7", "f"], (LineRange(None, 7),)),
        (["--li=7", "f"], (LineRange(None, 7),)),  # getopt's unambiguous abbreviation
        (["-n", "-3", "f"], (LineRange(None, -4),)),  # all but the last 3
        (["-n", "-0", "f"], (LineRange(),)),  # all but the last 0: the whole file
        (["-c", "100", "f"], (LineRange(None, 100, "byte"),)),
        (["-c1K", "f"], (LineRange(None, 1024, "byte"),)),
        (["-qn", "2", "f"], (LineRange(None, 2),)),
        (["-n", "$N", "f"], None),
        (["-n", "lots", "f"], None),
    ],
)
def test_head_ranges(args: list[str | None], ranges: tuple[LineRange, ...] | None) -> None:
    args = [None if a == "$N" else a for a in args]
    result = plan("head", args)
    assert result is not None
    assert result.ranges == ranges
    assert result.files == (len(args) - 1,)


@pytest.mark.parametrize(
    ("args", "ranges"),
    [
        (["f"], (LineRange(-10, None),)),
        (["-n", "5", "f"], (LineRange(-5, None),)),
        (["-n", "-5", "f"], (LineRange(-5, None),)),
        (["-20", "f"], (LineRange(-20, None),)),
        (["-n", "+3", "f"], (LineRange(3, None),)),
        (["-n+1", "f"], (LineRange(1, None),)),
        (["-c", "64", "f"], (LineRange(-64, None, "byte"),)),
        (["-f", "f"], (LineRange(-10, None),)),
        (["-fn", "3", "f"], (LineRange(-3, None),)),
        (["-s", "2", "-n", "4", "f"], (LineRange(-4, None),)),  # -s takes a value
        (["--follow=name", "--lines=2", "f"], (LineRange(-2, None),)),
        (["--pid", "42", "f"], (LineRange(-10, None),)),
        ([UNKNOWN_OPTION, "f"], None),  # tail -$n f
    ],
)
def test_tail_ranges(args: list[str], ranges: tuple[LineRange, ...] | None) -> None:
    result = plan("tail", args)
    assert result is not None
    assert result.ranges == ranges
    assert result.files == (len(args) - 1,)


@pytest.mark.parametrize("program", ["head", "tail"])
def test_zero_lines_print_nothing(program: str) -> None:
    assert plan(program, ["-n", "0", "f"]) is None
    assert plan(program, ["-c", "0", "f"]) is None


def test_head_and_tail_read_stdin_without_operands() -> None:
    assert plan("head", ["-n", "3"]) == Plan((), (LineRange(None, 3),))
    assert plan("tail", ["-"]) == Plan((), (LineRange(-10, None),))


@pytest.mark.parametrize(
    ("args", "ranges"),
    [
        (["-n", "1,5p", "f"], (LineRange(1, 5),)),
        (["-n", "10,20p", "f"], (LineRange(10, 20),)),
        (["-n", "7p", "f"], (LineRange(7, 7),)),
        (["-n", "$p", "f"], (LineRange(-1, -1),)),
        (["-n", "3,$p", "f"], (LineRange(3, None),)),
        (["-n", "4,+2p", "f"], (LineRange(4, 6),)),
        (["-n", "9,3p", "f"], (LineRange(9, 9),)),  # an end before the start: one line
        (["-n", "2,4{p}", "f"], (LineRange(2, 4),)),
        (["-n", "p", "f"], (LineRange(1, None),)),
        (["-n", "1,5p;10,12p", "f"], (LineRange(1, 5), LineRange(10, 12))),
        (["-n", "1,50p;20q", "f"], (LineRange(1, 20),)),  # the quit ends the print
        (["-n", "1,50p;20Q", "f"], (LineRange(1, 19),)),
        (["-ne", "1,5p", "f"], (LineRange(1, 5),)),
        (["-n", "-e", "1,2p", "-e", "8p", "f"], (LineRange(1, 2), LineRange(8, 8))),
        (["--quiet", "--expression=3p", "f"], (LineRange(3, 3),)),
        (["1,5p", "-n", "f"], (LineRange(1, 5),)),  # permuted -n
        (["-E", "-n", "1,5p", "f"], (LineRange(1, 5),)),
        (["#n\n1,5p", "f"], (LineRange(1, 5),)),  # "#n" as the first line means -n
    ],
)
def test_sed_print_ranges(args: list[str], ranges: tuple[LineRange, ...]) -> None:
    result = plan("sed", args)
    assert result is not None
    assert result.ranges == ranges
    assert result.files == (len(args) - 1,)


@pytest.mark.parametrize(
    "args",
    [
        ["1,5p", "f"],  # no -n: prints every line, some twice; not a print range
        ["-n", "/re/p", "f"],  # a search, like grep
        ["-n", "s/a/b/p", "f"],  # an edit
        ["-n", "1,5!p", "f"],
        ["-n", "0,/re/p", "f"],
        ["-n", "1~2p", "f"],
        ["-i", "-n", "1,5p", "f"],  # edits in place: prints nothing
        ["-ni", "1,5p", "f"],
        ["--in-place", "-n", "1,5p", "f"],
        ["-n", "-f", "script.sed", "f"],
        ["-z", "-n", "1p", "f"],
        ["-n", UNKNOWN_OPTION, "1p", "f"],
        ["-n", None, "f"],  # a script the shell computes
        ["-n"],
    ],
)
def test_sed_without_a_print_range_prints_no_file(args: list[str | None]) -> None:
    assert plan("sed", args) is None


def test_sed_with_stdin_only_has_no_file_operand() -> None:
    assert plan("sed", ["-n", "1,5p"]) == Plan((), (LineRange(1, 5),))


def test_other_programs_print_nothing() -> None:
    assert plan("wc", ["-l", "f"]) is None
    assert plan("grep", ["x", "f"]) is None
