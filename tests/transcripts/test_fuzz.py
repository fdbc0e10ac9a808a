"""The analyzer's reader against the plain statement of its rules: whatever the file
holds (mutated real lines, a last line cut short, lines over the cap, deep nesting,
invalid UTF-8), :func:`~ctxrelay.transcripts._scan.read_raw` raises nothing but
:class:`~ctxrelay.errors.TranscriptError` and reads the records that ``json.loads`` on
each whole line, under the rules of :mod:`ctxrelay.transcripts._pass`, reads."""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts._pass import (
    BOUNDARY,
    USAGE,
    Pass,
    RawTranscript,
    first_line_problem,
    is_candidate,
)
from ctxrelay.transcripts._scan import read_raw
from tests.conftest import corpus_path
from tests.transcripts._lines import assistant, boundary, dumps, user

SPOTTER = "corpora/claude-code-transcripts/spotter"


def _record(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def by_lines(path: str, data: bytes, *, agent: bool = False, cap: int) -> RawTranscript | str:
    """The rules applied line by line with ``json.loads`` on each whole line; the reason
    when the file is skipped whole."""
    if not data:
        return "empty"
    lines = data.split(b"\n")
    unterminated = lines[-1] != b""
    if not unterminated:
        lines.pop()
    problem = first_line_problem(lines[0], complete=len(lines) > 1 or not unterminated)
    if problem is not None:
        return problem
    rules = Pass(agent)
    decoded = malformed = long_lines = 0
    boundary_seen = False
    for k, line in enumerate(lines):
        last = unterminated and k == len(lines) - 1
        if len(line) > cap:
            long_lines += 1
            continue
        if not is_candidate(line, boundary_seen, last):
            continue
        boundary_seen = boundary_seen or BOUNDARY in line
        if not (last or USAGE in line or rules.wants(line)):
            continue
        decoded += 1
        record = _record(line)
        if record is None:
            malformed += 1
            continue
        rules.feed(record)
    return rules.result(
        path, lines=decoded, malformed=malformed, size=len(data), long_lines=long_lines
    )


def check(data: bytes, *, cap: int = 1 << 20, agent: bool = False) -> None:
    """The reader and :func:`by_lines` agree on ``data``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "t.jsonl")
        Path(path).write_bytes(data)
        expected = by_lines(path, data, agent=agent, cap=cap)
        try:
            got: RawTranscript | tuple[str, str] = read_raw(path, agent=agent, line_cap=cap)
        except TranscriptError as exc:
            got = (exc.path, exc.reason)
    assert got == (expected if isinstance(expected, RawTranscript) else (path, expected))


@functools.cache
def _real_lines() -> list[bytes]:
    """The lines of the real transcripts that matter most: responses, boundaries,
    summaries, and a few others."""
    found: list[bytes] = []
    for file in sorted(corpus_path(SPOTTER).rglob("*.jsonl")):
        lines = file.read_bytes().split(b"\n")
        found += [line for line in lines if USAGE in line][:40]
        found += [line for line in lines if BOUNDARY in line or b"isCompactSummary" in line]
        found += [line for line in lines if line and USAGE not in line][:10]
    return found


def test_every_real_file_reads_as_the_rules_say() -> None:
    for file in sorted(corpus_path(SPOTTER).rglob("*.jsonl")):
        data = file.read_bytes()
        agent = file.name.startswith("agent-")
        check(data, agent=agent)
        check(data, agent=agent, cap=4096)  # small blocks, and the long lines skipped
        check(data[: len(data) // 2], agent=agent, cap=65536)  # cut mid-line


_PIECES = [
    b'"',
    b"\\",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b"\n",
    b"\x00",
    b"\xff",
    b"\xe2\x82",
    b'"content":[',
    b'],"stop_reason":',
    b'"message":{',
    USAGE,
    BOUNDARY,
    b'"isCompactSummary":true',
    b'"id":"msg_x"',
    b"99999999999999999999999",
    b"NaN",
    b'"\\ud800"',
]


@st.composite
def mutated(draw: st.DrawFn, line: bytes) -> bytes:
    """``line`` with a few bytes changed, cut, inserted or deleted."""
    data = bytearray(line)
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["insert", "delete", "flip", "cut"]))
        if op == "insert":
            data[at:at] = draw(st.sampled_from(_PIECES))
        elif op == "delete":
            del data[at : at + draw(st.integers(1, 40))]
        elif op == "flip" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif op == "cut":
            del data[at:]
    return bytes(data)


@st.composite
def transcripts(draw: st.DrawFn) -> bytes:
    real = _real_lines()
    first = dumps(user("hello", sessionId="s-1", version="2.1.39"))
    lines = [first]
    for _ in range(draw(st.integers(0, 12))):
        line = real[draw(st.integers(0, len(real) - 1))]
        lines.append(draw(mutated(line)) if draw(st.booleans()) else line)
    data = b"\n".join(lines) + draw(st.sampled_from([b"\n", b""]))
    if len(data) > len(first) + 1 and draw(st.booleans()):  # cut as while being written
        data = data[: draw(st.integers(len(first) + 1, len(data)))]
    return data


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=transcripts(), cap=st.sampled_from([512, 4096, 1 << 20]), agent=st.booleans())
def test_mutated_real_lines_read_as_the_rules_say(data: bytes, cap: int, agent: bool) -> None:
    check(data, cap=cap, agent=agent)


_SHAPES = st.sampled_from(
    [
        dumps(assistant("m1", read=10, output=3)),
        dumps(assistant("m1", read=10, output=7)),
        dumps(assistant("m2", read=20, sidechain=True)),
        dumps(boundary()),
        dumps(user("summary", isCompactSummary=True)),
        dumps(user("x" * 3000)),
        dumps({**assistant("m3", read=5), "pad": "y" * 5000}),
        b"not json",
        b"",
    ]
)


@settings(max_examples=100, deadline=None)
@given(
    lines=st.lists(_SHAPES, max_size=15),
    tail=st.binary(max_size=64),
    cap=st.sampled_from([64, 1000, 4096]),
)
def test_generated_lines_and_long_lines_read_as_the_rules_say(
    lines: list[bytes], tail: bytes, cap: int
) -> None:
    check(b"\n".join([dumps(user("start")), *lines]) + b"\n" + tail, cap=cap)


@settings(max_examples=60, deadline=None)
@given(first=st.binary(max_size=40), rest=st.binary(max_size=200))
def test_any_bytes_raise_only_a_transcript_error(first: bytes, rest: bytes) -> None:
    check(first + rest, cap=128)
    check(b"{" + first + b"\n" + rest, cap=128)


def test_deep_nesting_and_invalid_utf8_are_malformed_lines() -> None:
    deep = b'{"type":"assistant","output_tokens":1,"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    bad = dumps(assistant("m9", read=1)).replace(b'"m9"', b'"m\xff9"')
    cut = dumps(assistant("m\u00e9", read=1)).replace(b"\xc3\xa9", b"\xc3")
    data = b"\n".join([dumps(user("start")), deep, bad, cut, dumps(assistant("m1", read=4))])
    check(data + b"\n")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        path.write_bytes(data + b"\n")
        raw = read_raw(str(path))
    assert (raw.malformed, [e[0] for e in raw.responses]) == (3, ["m1"])


def test_a_last_line_cut_inside_a_string_is_malformed() -> None:
    # The input that crashed the C reader: a line that ends inside a string.
    data = b'{"type":"assistant","output_tokens":1}\n{"type":"s'
    check(data)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        path.write_bytes(data)
        raw = read_raw(str(path))
    assert (raw.lines, raw.malformed) == (2, 1)


_ODD = st.one_of(
    st.integers(-3, 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
    st.text(max_size=2),
    st.just([1]),
)


@st.composite
def odd_responses(draw: st.DrawFn) -> bytes:
    """A response line whose keys hold values of any JSON type (the typed decode takes
    the plain ones, the rest is decoded whole)."""
    line = assistant(draw(st.sampled_from(["m1", "m2", "m3"])))
    usage = line["message"]["usage"]
    for key in list(usage):
        if draw(st.booleans()):
            usage[key] = draw(_ODD)
    split = draw(st.sampled_from(["none", "odd", "dict", "missing"]))
    if split == "odd":
        usage["cache_creation"] = draw(_ODD)
    elif split == "dict":
        usage["cache_creation"] = {"ephemeral_1h_input_tokens": draw(_ODD)}
    for record, key, values in [
        (line["message"], "id", _ODD),
        (line["message"], "model", st.sampled_from([None, 5, "<synthetic>", "claude-x"])),
        (line, "isSidechain", _ODD),
        (line, "type", st.sampled_from(["assistant", "user", "system", "progress", None])),
        (line, "timestamp", _ODD),
        (line, "sessionId", _ODD),
        (line, "requestId", _ODD),
        (line["message"], "usage", st.sampled_from([None, 3, "u"])),
        (line, "message", st.sampled_from([None, "m"])),
    ]:
        if draw(st.integers(0, 9)) == 0:
            record[key] = draw(values)
    return dumps(line)


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(odd_responses(), max_size=8), agent=st.booleans())
def test_odd_values_in_responses_read_as_the_rules_say(lines: list[bytes], agent: bool) -> None:
    check(b"\n".join([dumps(user("start")), *lines]) + b"\n", agent=agent)
