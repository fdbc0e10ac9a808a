"""The file tool calls read in the same pass as a session file's bill are the ones the
rules of :class:`~ctxrelay.transcripts._touches.Calls` find when they are applied line
by line (every whole line looked at, in order), and they survive their packing."""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxrelay.transcripts import Touches, read_touches, unpack_touches
from ctxrelay.transcripts._formats import read_file, scan_file
from ctxrelay.transcripts._pass import USAGE, RawTranscript
from ctxrelay.transcripts._scan import _fields, read_raw
from ctxrelay.transcripts._touches import RESULT, Calls
from tests.conftest import corpus_path
from tests.transcripts._lines import assistant, boundary, dumps, user

SPOTTER = "corpora/claude-code-transcripts/spotter"


def by_lines(data: bytes, *, cap: int) -> Touches:
    """The touch rules line by line: a line naming a wanted call's result hands its
    results over, then a line with a usage object (a response's) hands its calls over;
    lines over the cap are skipped. The decode is the reader's own (the keys it reads):
    what this checks is which lines reach it, and in which order."""
    calls = Calls()
    for line in data.split(b"\n"):
        if len(line) > cap:
            continue
        if calls.wanted and RESULT in line and any(n in line for n in calls.wanted):
            record = _fields(line)
            if record is not None:
                calls.take_results(record)
        if USAGE in line and line.rstrip().endswith(b"}"):
            record = _fields(line)
            if record is not None:
                calls.take_calls(record)
    return calls.touches()


def check(data: bytes, *, cap: int = 1 << 20) -> Touches:
    """The reader and :func:`by_lines` agree on ``data``; the touches read."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        path.write_bytes(data)
        got = read_touches(path, line_cap=cap)
    assert got == by_lines(data, cap=cap)
    return got


def test_the_real_files_read_as_the_rules_say() -> None:
    found = 0
    for file in sorted(corpus_path(SPOTTER).rglob("*.jsonl")):
        if file.name.startswith("agent-"):
            continue
        data = file.read_bytes()
        touches = check(data)
        check(data, cap=4096)  # small blocks, and the long lines skipped
        check(data[: len(data) // 2], cap=65536)  # cut mid-line
        found += sum(len(t) for t in touches.by_response.values())
        assert touches.results_bytes  # responses with several calls, their results found
    assert found > 100  # the corpus's sessions read and edit files


def test_the_analyzers_read_carries_the_touches_packed() -> None:
    for file in sorted(corpus_path(SPOTTER).rglob("*.jsonl")):
        agent = file.name.startswith("agent-")
        raw = read_file(str(file), agent=agent)
        assert isinstance(raw, RawTranscript)
        if agent:
            assert raw.touches is None  # a subagent's chain is never replayed
            continue
        assert raw.touches is not None
        assert unpack_touches(raw.touches) == read_touches(file)
        assert scan_file(file).touches == raw.touches
        # the bill is the same whether the touches are read with it or not
        assert read_raw(str(file))._replace(touches=raw.touches) == raw


def _call(n: int, name: str = "Read") -> dict[str, Any]:
    key = "command" if name == "Bash" else "file_path"
    return {"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": {key: f"/p/f{n}"}}


def _response(message_id: str, block: dict[str, Any], **extra: Any) -> bytes:
    line = assistant(message_id, read=100)
    line["message"]["content"] = [block]
    return dumps({**line, **extra})


def _result(n: int, text: str, result: Any = None) -> bytes:
    """The result line of call ``n``; ``result`` the tool's own record of it (a subagent's
    has its usage)."""
    content = [{"tool_use_id": f"toolu_{n}", "type": "tool_result", "content": text}]
    return dumps(user(toolUseResult=result or text) | {"message": {"content": content}})


def _progress(n: int) -> bytes:
    return dumps({"type": "progress", "toolUseID": f"toolu_{n}", "data": {"x": 1}})


@functools.cache
def _pieces() -> list[list[bytes]]:
    """Runs of lines as a session writes them, odd ones among them."""
    return [
        # one response, two calls, their results after both
        [
            _response("m1", _call(1)),
            _response("m1", _call(2)),
            _result(1, "a" * 900),
            _result(2, "b" * 300),
        ],
        # a result written before the second call: its size is not known
        [
            _response("m2", _call(3)),
            _result(3, "c" * 500),
            _response("m2", _call(4, "Bash")),
            _progress(4),
            _result(4, "d" * 200),
        ],
        # one call alone: its result is not read
        [_response("m3", _call(5)), _result(5, "e" * 4000)],
        # results the bill reads too: a subagent's usage, a boundary named
        [
            _response("m4", _call(6, "Task")),
            _response("m4", _call(7, "Task")),
            _result(6, "r" * 50, {"usage": {"output_tokens": 3}}),
            _result(7, "s" * 70, {"subtype": "compact_boundary"}),
        ],
        [_response("m5", {"type": "text", "text": 'a "tool_result" in text'})],
        [
            _response("m6", _call(8), isSidechain=True),
            _response("m6", _call(9), isSidechain=True),
            _result(8, "side"),
        ],
        [dumps(boundary()), dumps(user("summary", isCompactSummary=True))],
        [dumps(user("y" * 3000))],
        [b"not json", b""],
    ]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    runs=st.lists(st.integers(0, 8), max_size=12),
    cap=st.sampled_from([256, 1024, 4096, 1 << 20]),
    cut=st.integers(0, 400),
)
def test_generated_sessions_read_as_the_rules_say(runs: list[int], cap: int, cut: int) -> None:
    lines = [dumps(user("start"))]
    for k in runs:
        lines += _pieces()[k]
    data = b"\n".join(lines) + b"\n"
    check(data, cap=cap)
    check(data[: max(len(lines[0]) + 1, len(data) - cut)], cap=cap)  # cut while written


def test_a_response_with_several_calls_has_its_results_bytes() -> None:
    data = b"\n".join([dumps(user("start")), *_pieces()[0], *_pieces()[1], *_pieces()[2]])
    touches = check(data + b"\n")
    assert touches.called("m1") == 2
    assert touches.results_bytes["m1"] == sum(len(json.dumps(t)) for t in ("a" * 900, "b" * 300))
    assert "m2" not in touches.results_bytes  # one result came before the second call
    assert [t.result_bytes for t in touches.of("m3")] == [0]  # one call: not read
