"""The guard's fast path for plain commands gives exactly the parser's answer.

:func:`ctxrelay.hooks.guard._plain.plain_scan` answers plain printer commands without
tree-sitter; every answer it gives must be the one the parser's walk gives, and it must
leave everything else to the parser.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ctxrelay.hooks.guard._plain import PATH_MAX, plain_scan
from ctxrelay.hooks.guard._shell import scan
from ctxrelay.hooks.guard.prints import classify, might_print_file

CWD = "/w/project"

# Words of plain commands: the printers and other programs, their options and counts
# (valid and not), sed scripts, paths of every shape the plain alphabet allows, and
# words bash would treat as keywords or job specs elsewhere.
_WORDS = (
    "cat",
    "head",
    "tail",
    "sed",
    "ls",
    "git",
    "echo",
    "-n",
    "-c",
    "-5",
    "-20f",
    "-5c",
    "+3",
    "-q",
    "-s",
    "-v",
    "-A",
    "-E",
    "-b",
    "-u",
    "--",
    "-",
    "--lines=5",
    "--bytes=2K",
    "-n5",
    "-c+2",
    "5",
    "0",
    "20",
    "2K",
    "1M",
    "1,5p",
    "3p",
    "5q",
    "$p",
    "-e",
    "-f",
    "1,+2p",
    "f",
    "a.txt",
    "../up/x.log",
    "/etc/passwd",
    "/dev/null",
    "/proc/1/status",
    "dir/",
    "./b",
    ".hidden",
    "a=b",
    "=",
    ":",
    ":x",
    "@f",
    "%1",
    "%",
    "x,y",
    "if",
    "then",
    "fi",
    "do",
    "done",
    "in",
    "time",
)
_SPACES = [" ", "  ", "\t", " \t "]


@st.composite
def plain_commands(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=7))
    seps = draw(st.lists(st.sampled_from(_SPACES), min_size=len(words) + 1))
    lead = draw(st.sampled_from(["", " ", "\t"]))
    trail = draw(st.sampled_from(["", " ", "\t"]))
    return lead + "".join(w + s for w, s in zip(words, seps[1:], strict=False)).rstrip() + trail


@given(plain_commands(), st.sampled_from([CWD, None, "/"]))
@settings(max_examples=1500, deadline=None)
@example("cat big.txt", CWD)
@example("head -n 5 a.txt b", CWD)
@example("tail -5 /etc/passwd", None)
@example("sed -n 1,5p f", CWD)
@example("cat", CWD)
@example("cat -", CWD)
@example("cat -- -n", CWD)
def test_plain_answers_equal_the_parsers(command: str, cwd: str | None) -> None:
    fast = plain_scan(command, cwd)
    if fast is not None:
        assert fast == scan(command, cwd), command
        assert [repr(p) for p in fast] == [repr(p) for p in scan(command, cwd) or ()]
    # And the guard as a whole answers as it did before the fast path existed.
    assert classify(command, cwd) == (scan(command, cwd) if might_print_file(command) else ())


def test_common_denied_commands_take_the_fast_path() -> None:
    for command in ("cat big.txt", "head -n 50 src/app.py", "tail -f log/x.log", "sed -n 1,9p f"):
        assert plain_scan(command, CWD), command


@pytest.mark.parametrize(
    "command",
    [
        "cat 'a b'",
        'cat "$f"',
        "cat *.log",
        "cat ~/x",
        "cat f | wc -l",
        "cat f > out",
        "cat f; ls",
        "cat f\nls",
        "cat f # note",
        "sudo cat f",
        "/bin/cat f",
        "X=1 cat f",
        "cat {a,b}",
        "cat a\\ b",
        "cat $(ls)",
        "cat é",
        "ls",
        "git cat-file -p HEAD",
        "",
        "   ",
    ],
)
def test_anything_else_goes_to_the_parser(command: str) -> None:
    assert plain_scan(command, CWD) is None


def test_a_word_too_long_for_a_path_is_no_operand() -> None:
    long = "a" * (PATH_MAX + 1)
    assert plain_scan(f"cat {long}", CWD) == scan(f"cat {long}", CWD) == ()
    assert plain_scan(f"cat {long} f", CWD) == scan(f"cat {long} f", CWD)
