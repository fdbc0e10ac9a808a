"""The C reader (``_native.c``) answers as the Python reader does, or says it is unsure.

``ctxrelay.transcripts._pass`` is the reference: every test here reads the same bytes
both ways and compares what the reader goes on to read (the spans, the records' fields,
whole transcripts), on the real corpus and on generated lines built to hit every branch
of a JSON decoder: escapes, non-ASCII, numbers of every form, duplicate keys, bad bytes,
truncation, deep nesting, the splice's patterns where they are not structure.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ctxrelay.transcripts._pass as reader
from ctxrelay._fastjson import loads
from tests.conftest import SHARED, need


@pytest.fixture
def native() -> ModuleType:
    try:
        from ctxrelay.transcripts import _native
    except ImportError:
        need("NATIVE", "the C reader was not built (no C compiler when ctxrelay was installed)")
    return _native


def _native_module() -> ModuleType | None:
    try:
        from ctxrelay.transcripts import _native
    except ImportError:
        return None
    return _native


# ---- the two readers side by side ----

_BOUNDARY_LINE = (
    b'{"type":"system","subtype":"compact_boundary","compactMetadata":'
    b'{"trigger":"auto","preTokens":170000},"timestamp":"2026-02-12T20:30:28.504Z"}\n'
)


def _pure(data: bytes, agent: bool) -> tuple[Any, ...]:
    """The Python pass's answer (``_pass._read``, the reference)."""
    return reader._read("t.jsonl", data, agent, loads)


def _compare(native: ModuleType, data: bytes, *, agent: bool = False) -> bool:
    """Whether the C pass was sure of ``data`` (and, when it was, agreed)."""
    got = native.read(data, agent)
    if got is None:
        return False
    session, version, responses, compactions, lines, malformed, synthetic = got
    assert (
        "t.jsonl", session, version, responses, compactions, lines, malformed, len(data),
        synthetic,
    ) == _pure(data, agent), data  # fmt: skip
    return True


def _compare_line(native: ModuleType, line: bytes) -> bool:
    """The C pass on ``line`` alone, terminated, after a compaction boundary and as a
    subagent's file; whether it was sure of the line."""
    sure = _compare(native, line)
    _compare(native, line + b"\n")
    _compare(native, _BOUNDARY_LINE + line)
    _compare(native, line + b"\n", agent=True)
    return sure


# ---- the real corpus ----


def _corpus_files() -> list[Path]:
    if not SHARED.exists():
        return []
    return sorted(SHARED.rglob("*.jsonl"))


def test_the_real_corpus_reads_the_same_both_ways(
    native: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _corpus_files()
    if not files:
        need("CORPORA", f"no transcripts under {SHARED}")
    for path in files:
        data = path.read_bytes()
        assert native.spans(data) == reader._spans(data), path
        assert _compare(native, data), path  # sure of every real file
        assert _compare(native, data, agent=True), path
        with monkeypatch.context() as pure:
            pure.setattr(reader, "_native", None)
            expected = reader.read_raw(os.fspath(path))
        assert reader.read_raw(os.fspath(path)) == expected, path


# ---- generated lines ----

_KEPT_KEYS = ["sessionId", "version", "isSidechain", "type", "timestamp", "agentId"]
_KEPT_KEYS += ["requestId", "subtype", "message", "parentUuid", "cwd"] * 3
_KEPT_KEYS += ["compactMetadata", "isCompactSummary"]  # handed back to json: now and then
_USAGE_KEYS = ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"]
_USAGE_KEYS += ["output_tokens", "cache_creation"]

_exotic = st.sampled_from(
    ['"', "\\", "\n", "\x00", "\x1f", "\x7f", "é", "中", "\U0001f600", "\ud800", "\udc00",
     '"content":[', '],"stop_reason":', '"message":{', '"output_tokens":']
)  # fmt: skip
_plain = st.text(alphabet="abcxyz-_:.0123 ", max_size=8)
# mostly plain text, which the C reader decodes itself; now and then what only json can
_mixed = st.lists(_plain | _exotic, max_size=5).map("".join)
_text = st.one_of(*[_plain] * 9, _mixed)
_numbers = st.one_of(
    *[st.integers(-5, 10**6).map(str)] * 5,
    st.sampled_from(
        ["-0", "12345678901234567", "123456789012345678901234", "1.0", "2.5", "1e3", "1E-2",
         "-0.0", "NaN", "Infinity", "-Infinity", "01", "1.", ".5", "+1", "1e", "- 1", "0x10"]
    ),
)  # fmt: skip


def _raw(text: str) -> str:
    """A JSON string of ``text``, escaped in one of the ways json allows."""
    return json.dumps(text, ensure_ascii=False)


def _scalars(text: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        *[text.map(_raw)] * 3,
        text.map(json.dumps),  # \\u escapes for everything non-ASCII
        st.sampled_from(["true", "false", "null", "tru", "nul", '"\\x"', '"\\u12"', '"a\tb"']),
        _numbers,
    )


def _values(text: st.SearchStrategy[str], depth: int = 0) -> st.SearchStrategy[str]:
    if depth > 2:
        return _scalars(text)
    inner = _values(text, depth + 1)
    return st.one_of(
        _scalars(text),
        st.lists(inner, max_size=3).map(lambda xs: "[" + ",".join(xs) + "]"),
        st.lists(st.tuples(text.map(_raw), inner), max_size=3).map(
            lambda kv: "{" + ",".join(f"{k}:{v}" for k, v in kv) + "}"
        ),
    )


_VALUES = _values(_text)  # kept values: mostly what the C reader decodes itself
_RICH = _values(_mixed)  # skipped values (the content): every string is odd
_SCALARS = _scalars(_text)
_ws = st.sampled_from(["", "", "", "", " ", "\t", "\r\n ", "\x0b"])


def _object(keys: list[str], value: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    entry = st.tuples(
        st.one_of(
            *[st.sampled_from(keys).map(_raw)] * 4, _plain.map(_raw), st.just('"\\u0074ype"')
        ),
        _ws,
        value,
    )
    return st.lists(entry, max_size=6).map(
        lambda kv: "{" + ",".join(f"{k}{w}:{w}{v}" for k, w, v in kv) + "}"
    )


_usage = _object(_USAGE_KEYS, _VALUES | _object(["ephemeral_1h_input_tokens"], _VALUES))


# the values the reader acts on, so its branches are taken, not only its refusals
_meaningful = st.lists(
    st.sampled_from(
        ['"type":"assistant"', '"type":"assistant"', '"type":"user"', '"type":"system"',
         '"subtype":"compact_boundary"', '"isCompactSummary":true', '"isSidechain":true',
         '"isSidechain":false', '"sessionId":"s-1"', '"version":"2.1.39"',
         '"timestamp":"2026-02-10T21:11:59.186Z"', '"agentId":"a1"', '"requestId":"req_1"',
         '"compactMetadata":{"preTokens":170000,"trigger":"auto"}', '"compactMetadata":{}',
         '"compactMetadata":{"trigger":null,"preTokens":"x"}']
    ),
    max_size=5,
)  # fmt: skip
_summary_content = st.one_of(
    _text.map(_raw),
    _mixed.map(json.dumps),
    st.lists(
        st.one_of(
            _object(["text", "type"], _VALUES),
            st.tuples(_mixed, _mixed).map(
                lambda t: json.dumps({"type": "text", "text": t[0], "x": t[1]})
            ),
        ),
        max_size=3,
    ).map(lambda xs: "[" + ",".join(xs) + "]"),
)


@st.composite
def _compaction_lines(draw: st.DrawFn) -> bytes:
    """A boundary or a summary line, or a line that only names them."""
    top = draw(_meaningful)
    if draw(st.booleans()):
        top.append(f'"message":{{"role":"user","content":{draw(_summary_content)}}}')
    if draw(st.booleans()):
        top.append('"compact_boundary":1' if draw(st.booleans()) else '"x":"isCompactSummary"')
    return ("{" + ",".join(draw(st.permutations(top))) + "}").encode("utf-8", "surrogatepass")


@st.composite
def _lines(draw: st.DrawFn) -> bytes:
    usage_fields = draw(st.lists(st.tuples(st.sampled_from(_USAGE_KEYS), _VALUES), max_size=4))
    usage = "{" + ",".join(f"{_raw(k)}:{v}" for k, v in usage_fields)
    usage += ("," if usage_fields else "") + f'"output_tokens":{draw(_numbers)}}}'
    if draw(st.booleans()):
        usage = draw(_usage)[:-1] + ("," if draw(_usage) != "{}" else "") + usage[1:]
    content = draw(st.lists(_RICH, max_size=3))
    message = [
        f'"id":{draw(_SCALARS)}',
        f'"model":{draw(_SCALARS)}',
        '"content":[' + ",".join(content) + "]",
        f'"stop_reason":{draw(_RICH)}',
        f'"usage":{usage}',
    ]
    if draw(st.booleans()):
        message = draw(st.permutations(message))
    top = [f'"message":{{{",".join(message)}}}', *draw(_meaningful)]
    for key, value in draw(st.lists(st.tuples(st.sampled_from(_KEPT_KEYS), _VALUES), max_size=6)):
        top.append(f"{_raw(key)}:{value}")
    top = draw(st.permutations(top))
    line = ("{" + ",".join(top) + "}" + draw(_ws)).encode("utf-8", "surrogatepass")
    damage = draw(st.sampled_from(["none"] * 6 + ["cut", "byte", "insert"]))
    if damage != "none" and line:
        at = draw(st.integers(0, len(line) - 1))
        if damage == "cut":
            line = line[:at]
        elif damage == "byte":
            line = line[:at] + bytes([draw(st.integers(0, 255))]) + line[at + 1 :]
        else:
            line = line[:at] + draw(st.sampled_from([b"\xff", b"\xed\xa0\x80", b"\xc0\x80"]))
            line += line[at:]
    return line


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(line=_lines())
def test_a_generated_line_reads_the_same_or_is_handed_back(line: bytes) -> None:
    native = _native_module()
    assume(native is not None)
    assert native is not None
    _compare_line(native, line)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(lines=st.lists(_lines() | _compaction_lines(), max_size=8), end=st.sampled_from(["", "\n"]))
def test_a_generated_file_reads_the_same_or_is_handed_back(lines: list[bytes], end: str) -> None:
    native = _native_module()
    assume(native is not None)
    assert native is not None
    data = b"\n".join(lines) + end.encode()
    _compare(native, data)
    _compare(native, data, agent=True)


# Keys that need no escape: an escaped key in a content block could be "text" (the C
# pass hands such a line back). Values hold anything.
_key = st.text(alphabet="abcxyz_ text", max_size=4)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_key, inner, max_size=3),
    max_leaves=8,
)
_name = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=9)
_word = st.text(alphabet="abcxyz-_:.0123 TZ", max_size=24)


@settings(max_examples=300, deadline=None)
@given(
    extra=st.dictionaries(_name, _json, max_size=4),
    message_extra=st.dictionaries(_name, _json, max_size=3),
    content=st.lists(_json, max_size=3),
    top=st.fixed_dictionaries(
        {},
        optional={
            "sessionId": _word, "version": _word, "isSidechain": st.booleans(),
            "type": st.sampled_from(["assistant", "user", "system"]), "timestamp": _word,
            "agentId": _word, "requestId": _word, "subtype": _word,
        },
    ),
    counts=st.lists(st.integers(0, 10**12), min_size=5, max_size=5),
    ascii_only=st.booleans(),
    order=st.randoms(use_true_random=False),
)  # fmt: skip
def test_a_record_json_wrote_is_read_in_c_and_the_same(  # noqa: PLR0917 - hypothesis
    extra: dict[str, Any],
    message_extra: dict[str, Any],
    content: list[Any],
    top: dict[str, Any],
    counts: list[int],
    ascii_only: bool,
    order: Any,
) -> None:
    native = _native_module()
    assume(native is not None)
    assert native is not None
    usage: dict[str, Any] = dict(zip(_USAGE_KEYS[:4], counts[:4], strict=True))
    usage["cache_creation"] = {"ephemeral_1h_input_tokens": counts[4]}
    message: dict[str, Any] = {"id": "msg_1", "model": "claude-x", "content": content}
    message["stop_reason"] = None
    message |= {k: v for k, v in message_extra.items() if k not in message}
    message["usage"] = usage
    record = {k: v for k, v in extra.items() if k not in _KEPT_KEYS} | top | {"message": message}
    keys = list(record)
    order.shuffle(keys)
    line = json.dumps({k: record[k] for k in keys}, ensure_ascii=ascii_only).encode()
    assert _compare_line(native, line)  # sure: nothing here needs json's own judgement


@pytest.mark.parametrize(
    "line",
    [
        b'{"message":{"id":"m","usage":{"output_tokens":5}},"type":"assistant"}',
        b'{"type":"assistant","message":{"id":"m","content":[{"text":"\\"],\\"stop_reason\\":"}],'
        b'"stop_reason":null,"usage":{"output_tokens":5}}}',
        b'{"type":"assistant","type":"user","message":{"id":"a","id":"b","usage":'
        b'{"output_tokens":1,"output_tokens":2}}}',
        b'{"message":{"id":"m","usage":{"output_tokens":5,"cache_creation":{'
        b'"ephemeral_1h_input_tokens":3}}}, "sessionId":"s\xc3\xa9","version":[1]}',
        b'{"message":{"id":"m","usage":{"output_tokens":5}}} x',
        b'{"message":{"id":"m","usage":{"output_tokens":5}},"k":"\xed\xa0\x80"}',
        b'{"message":{"id":"m","usage":{"output_tokens":5}},"k":"\xc0\x80"}',
        b'{"message":{"id":"m","usage":{"output_tokens":5}},"k":[' + b"[" * 300 + b"]" * 300
        + b"]}",
        b'{"message":{"id":"m","usage":{"output_tokens":-5}}}',
        b'{"message":{"id":"m","usage":{"output_tokens":5,}}}',
    ],
    ids=range(10),
)  # fmt: skip
def test_edge_lines(native: ModuleType, line: bytes) -> None:
    _compare_line(native, line)


def test_the_c_pass_hands_back_what_only_json_can_tell(native: ModuleType) -> None:
    for line in (
        b'{"message":{"id":"m\\u00e9","usage":{"output_tokens":5}}}',  # an escape in a kept str
        b'{"message":{"id":"m","usage":{"output_tokens":5.0}}}',  # a float
        b'{"\\u0074ype":"x","message":{"id":"m","usage":{"output_tokens":5}}}',  # escaped key
        b' {"message":{"id":"m","usage":{"output_tokens":5}}}',  # json strips the space
        b'{"type":"assistant","message":{"id":7,"model":"<synthetic>","usage":'
        b'{"output_tokens":0}}}',  # str(7) of a synthetic response's id
    ):
        assert native.read(line, False) is None, line
        assert native.read(line + b"\n", False) is None, line
    assert _compare(native, b'{"message":{"usage":{"output_tokens":5}}}\n')  # sure of this


@settings(max_examples=300, deadline=None)
@given(
    chunks=st.lists(
        st.sampled_from(
            [
                b'{"type":"assistant","message":{"id":"a","usage":{"output_tokens":1}}}\n',
                b'{"type":"system","subtype":"compact_boundary","compactMetadata":{"preTokens":9}}\n',
                b'{"type":"user","isCompactSummary":true,"message":{"content":"sum"}}\n',
                b'"output_tokens":\n',
                b"\n",
                b"x",
                b'"compact_boundary"',
                b'"isCompactSummary"',
            ]
        ),
        max_size=12,
    )
)
def test_spans_are_the_python_spans(chunks: list[bytes]) -> None:
    native = _native_module()
    assume(native is not None)
    assert native is not None
    data = b"".join(chunks)
    assert native.spans(data) == reader._spans(data)


def test_mutated_real_transcripts_read_the_same_or_are_handed_back(native: ModuleType) -> None:
    """Windows of the real corpus with bytes flipped, inserted and cut: the C pass agrees
    with the Python pass wherever it is sure, and neither raises (a fuzz run of this kind
    found json's C scanner raising SystemError on a malformed line before ``json`` is
    imported; ``ctxrelay._fastjson`` now turns that into json's error)."""
    import random

    files = [p.read_bytes() for p in _corpus_files()]
    if not files:
        need("CORPORA", f"no transcripts under {SHARED}")
    pieces = [b'"', b"\\", b"{", b"}", b"[", b"]", b",", b":", b"\n", b"\xff", b"\xed\xa0\x80"]
    pieces += [b'"output_tokens":', b'"compact_boundary"', b'"isCompactSummary"', b"\\u", b"NaN"]
    rnd = random.Random(13)
    sure = 0
    for _ in range(2000):
        data = bytearray(rnd.choice(files))
        if len(data) > 20_000:
            at = rnd.randrange(len(data) - 20_000)
            data = data[at : at + rnd.randrange(100, 20_000)]
        for _ in range(rnd.randrange(1, 12)):
            i = rnd.randrange(len(data))
            roll = rnd.random()
            if roll < 0.4:
                data[i] = rnd.randrange(256)
            elif roll < 0.7:
                data[i:i] = rnd.choice(pieces)
            else:
                del data[i : i + rnd.randrange(1, 50)]
        agent = rnd.random() < 0.3
        _pure(bytes(data), agent)  # never raises
        sure += _compare(native, bytes(data), agent=agent)
    assert sure > 500
