"""The Read call of a denial shows exactly what the denied command would have printed.

Each command runs for real (bash, GNU coreutils, GNU sed) on a real file; its output is
compared with the lines the suggested Read call covers: ``offset`` (1-based, default 1)
and ``limit`` (default: to the end). Byte ranges (``head -c``) are rounded out to whole
lines, so there the command's output must lie within the lines the call shows.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxrelay.claude.guard._reads import read_calls
from ctxrelay.hooks.guard.prints import classify

BASH = shutil.which("bash")
_CALL = re.compile(r"Read (\{.*?\})(?: \((.*)\))?$", re.MULTILINE)

LINE_COMMANDS = [
    "cat f",
    "head f",
    "head -n {n} f",
    "head -{n} f",
    "head --lines={n} f",
    "head -n -{n} f",
    "tail f",
    "tail -n {n} f",
    "tail -{n} f",
    "tail -n +{a} f",
    "sed -n '{a},{b}p' f",
    "sed -n '{a}p' f",
    "sed -n '$p' f",
    "sed -n '{a},$p' f",
    "sed -n '{a},+{n}p' f",
    "sed -n '{a},{b}p;{b}q' f",
    "cat < f",
    "cd sub && tail -n {n} ../f",
]


def read_lines(path: Path, call: dict[str, object]) -> list[str]:
    """The lines a Read call shows (without Claude Code's line numbers)."""
    lines = path.read_bytes().decode().splitlines()
    offset = call.get("offset", 1)
    limit = call.get("limit")
    assert isinstance(offset, int)
    start = offset - 1
    return lines[start:] if limit is None else lines[start : start + int(str(limit))]


def run(command: str, cwd: Path) -> list[str]:
    assert BASH is not None
    done = subprocess.run(
        [BASH, "-c", command], cwd=cwd, capture_output=True, check=True, timeout=30
    )
    return done.stdout.decode().splitlines()


def calls(command: str, cwd: Path) -> list[tuple[dict[str, object], str]]:
    """The Read calls (input, note) that show what the command prints; none when it
    prints no file."""
    found = classify(command, str(cwd)) or ()
    return [
        (dict(call.tool_input()), call.note)
        for printed in dict.fromkeys(found)
        for call in read_calls(printed)[0]
    ]


def make_file(root: Path, count: int, newline_at_end: bool) -> Path:
    (root / "sub").mkdir(exist_ok=True)
    text = "".join(f"line {i} of {count}\n" for i in range(1, count + 1))
    if text and not newline_at_end:
        text = text[:-1]
    path = root / "f"
    path.write_text(text)
    return path


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@given(
    template=st.sampled_from(LINE_COMMANDS),
    count=st.integers(0, 40),
    newline_at_end=st.booleans(),
    numbers=st.tuples(st.integers(1, 45), st.integers(1, 45), st.integers(1, 45)),
)
@settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_the_read_call_shows_what_the_command_prints(
    tmp_path: Path,
    template: str,
    count: int,
    newline_at_end: bool,
    numbers: tuple[int, int, int],
) -> None:
    path = make_file(tmp_path, count, newline_at_end)
    a, b, n = numbers
    command = template.format(a=a, b=b, n=n)
    printed = run(command, tmp_path)
    suggested = calls(command, tmp_path)
    if not suggested:  # allowed: only when the command prints no line of the file
        assert printed == [], command
        return
    assert len(suggested) == 1, (command, suggested)
    call, note = suggested[0]
    assert call["file_path"] == str(path)
    if not printed and "the file has" in note:
        return  # prints nothing, and the note says so
    assert read_lines(path, call) == printed, (command, count, call)


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@given(
    template=st.sampled_from(["head -c {n} f", "tail -c {n} f", "head -c -{n} f"]),
    count=st.integers(1, 30),
    n=st.integers(1, 400),
)
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_a_byte_range_read_covers_what_the_command_prints(
    tmp_path: Path, template: str, count: int, n: int
) -> None:
    path = make_file(tmp_path, count, True)
    command = template.format(n=n)
    assert BASH is not None
    printed = subprocess.run(
        [BASH, "-c", command], cwd=tmp_path, capture_output=True, check=True
    ).stdout.decode()
    suggested = calls(command, tmp_path)
    assert len(suggested) == 1, command
    ((call, note),) = suggested
    if not printed:
        return
    shown = "\n".join(read_lines(path, call)) + "\n"
    assert printed.strip("\n") in shown, (command, call, note)
