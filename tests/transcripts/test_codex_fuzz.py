"""The Codex rollout reader against the plain statement of its rules: whatever the file
holds (mutated lines, a last line cut short, lines over the cap, invalid UTF-8),
:func:`~ctxrelay.transcripts._codex.read_rollout_raw` raises nothing but
:class:`~ctxrelay.errors.TranscriptError` and reads what ``json.loads`` on each whole
line, under :class:`~ctxrelay.transcripts._codex.CodexPass`, reads."""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts._codex import CodexPass, RawRollout, is_candidate, read_rollout_raw
from ctxrelay.transcripts._pass import first_line_problem
from ctxrelay.transcripts._scan import BLOCK_BYTES
from tests.transcripts._codex_lines import Rollout, dumps


def _record(line: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def by_lines(path: str, data: bytes, *, cap: int) -> RawRollout | str:
    """The rules applied line by line; the reason when the file is skipped whole."""
    if not data:
        return "empty"
    lines = data.split(b"\n")
    unterminated = lines[-1] != b""
    if not unterminated:
        lines.pop()
    if len(lines[0]) > cap:  # a first line over the cap is checked by its start alone
        problem = first_line_problem(lines[0][: min(cap, BLOCK_BYTES)], complete=False)
    else:
        problem = first_line_problem(lines[0], complete=len(lines) > 1 or not unterminated)
    if problem is not None:
        return problem
    rules = CodexPass()
    decoded = malformed = long_lines = 0
    for k, line in enumerate(lines):
        last = unterminated and k == len(lines) - 1
        if len(line) > cap:
            long_lines += 1
            continue
        if not is_candidate(line, rules.meta is not None, last):
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


def check(data: bytes, *, cap: int = 1 << 20) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "r.jsonl")
        Path(path).write_bytes(data)
        expected = by_lines(path, data, cap=cap)
        try:
            got: RawRollout | tuple[str, str] = read_rollout_raw(path, line_cap=cap)
        except TranscriptError as exc:
            got = (exc.path, exc.reason)
    assert got == (expected if isinstance(expected, RawRollout) else (path, expected))


@functools.cache
def _sample() -> Rollout:
    rollout = Rollout().turn("gpt-5.4").response("resp_1", 20_000, 19_000)
    rollout.message("user", "z" * 3000).response("resp_2", 25_000, 24_000, output=300)
    rollout.compaction("s" * 700).turn("gpt-5.5", "turn-2").response("resp_3", 9_000)
    rollout.response("resp_3", 9_500)  # a repeated id
    return rollout


def _lines() -> list[bytes]:
    return [dumps(line) for line in _sample().lines]


def test_a_sample_rollout_reads_as_the_rules_say_whole_cut_and_in_small_blocks() -> None:
    data = _sample().data()
    for cap in (1 << 20, 4096, 700, 100):
        check(data, cap=cap)
    for cut in range(len(_lines()[0]) + 1, len(data), 97):
        check(data[:cut], cap=4096)  # cut mid-line, as while Codex writes it
    # and without its usage records: counted from the token_count events
    lines = [x for x in _lines() if b'"type":"token_usage_record"' not in x]
    old = b"\n".join(lines) + b"\n"
    for cut in range(len(lines[0]) + 1, len(old), 89):
        check(old[:cut], cap=4096)


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
    b'"payload":',
    b'"type":"token_usage_record"',
    b'"type":"turn_context"',
    b'"type":"compacted"',
    b'"type":"token_count"',
    b'"total_token_usage":{"input_tokens":7}',
    b'"session_meta"',
    b'"usage":{"input_tokens":5}',
    b'"model":7',
    b'"response_id":"resp_1"',
    b"99999999999999999999999",
    b"NaN",
    b'"\\ud800"',
]


@st.composite
def mutated(draw: st.DrawFn, line: bytes) -> bytes:
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
def rollouts(draw: st.DrawFn) -> bytes:
    sample = _lines()
    first = sample[0] if draw(st.booleans()) else draw(mutated(sample[0]))
    lines = [first]
    for _ in range(draw(st.integers(0, 14))):
        line = sample[draw(st.integers(1, len(sample) - 1))]
        lines.append(draw(mutated(line)) if draw(st.booleans()) else line)
    data = b"\n".join(lines) + draw(st.sampled_from([b"\n", b""]))
    if len(data) > len(first) + 1 and draw(st.booleans()):
        data = data[: draw(st.integers(len(first) + 1, len(data)))]
    return data


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=rollouts(), cap=st.sampled_from([256, 4096, 1 << 20]))
def test_mutated_lines_read_as_the_rules_say(data: bytes, cap: int) -> None:
    check(data, cap=cap)


@settings(max_examples=60, deadline=None)
@given(first=st.binary(max_size=40), rest=st.binary(max_size=200))
def test_any_bytes_raise_only_a_transcript_error(first: bytes, rest: bytes) -> None:
    check(first + rest, cap=128)
    check(b"{" + first + b"\n" + rest, cap=128)
