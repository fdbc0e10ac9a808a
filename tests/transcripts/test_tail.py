"""The hook's tail reader: same answer as the full pass, reading only the end."""

from __future__ import annotations

import io
import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts import Transcript, agent_stats, latest_context, lines_backwards, scan
from tests.conftest import corpus_path
from tests.transcripts._lines import assistant, boundary, user, write

SPOTTER = "corpora/claude-code-transcripts/spotter"


def _corpus_files() -> list[Path]:
    root = corpus_path(SPOTTER)
    capture = corpus_path("corpora/claude-code-capture/projects")
    return sorted(root.glob("*.jsonl")) + sorted(capture.glob("*.jsonl"))


def test_tail_agrees_with_the_full_pass_on_every_real_transcript() -> None:
    for path in _corpus_files():
        reading = latest_context(path)
        transcript = scan(path)
        assert reading is not None, path
        last = transcript.responses[-1]
        assert (reading.context_tokens, reading.model, reading.message_id) == (
            last.context_tokens,
            last.model,
            last.message_id,
        ), path


def test_agent_stats_on_real_subagents() -> None:
    root = corpus_path(SPOTTER)
    seen = 0
    for path in sorted(root.glob("*/subagents/agent-*.jsonl")):
        stats = agent_stats(path)
        transcript = scan(path, agent=True)
        assert stats is not None
        assert stats.turns_used == transcript.requests
        assert stats.context_tokens == transcript.final_context_tokens
        assert stats.model == transcript.model
        reading = latest_context(path, agent=True)
        assert reading is not None
        assert reading.context_tokens == stats.context_tokens
        seen += 1
    assert seen == 6
    haiku = agent_stats(root / "8463c716-a2ea-4c14-9efa-87158ebd9f20/subagents/agent-a7be2f0.jsonl")
    assert haiku is not None
    assert (haiku.turns_used, haiku.context_tokens) == (13, 29_065)
    assert haiku.model == "claude-haiku-4-5-20251001"


def test_reads_the_tail_not_the_file(tmp_path: Path) -> None:
    # 12 MB of tool output before the newest response: found with a 1 MB allowance.
    filler = user("z" * 1_000_000)
    records = [assistant("m0", read=5), *[filler] * 12, assistant("m1", read=42)]
    path = write(tmp_path / "t.jsonl", records)
    reading = latest_context(path, max_bytes=1024 * 1024)
    assert reading is not None
    assert reading.context_tokens == 43
    # The only response is at the start: the allowance stops the reader before it.
    path = write(tmp_path / "u.jsonl", [assistant("m0", read=5), *[filler] * 12])
    assert latest_context(path, max_bytes=1024 * 1024) is None
    assert latest_context(path) is not None


def test_main_chain_skips_inline_sidechains(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.jsonl",
        [assistant("m1", read=70_000), assistant("s1", read=5, sidechain=True)],
    )
    reading = latest_context(path)
    assert reading is not None
    assert reading.message_id == "m1"
    agent = latest_context(path, agent=True)
    assert agent is not None
    assert agent.message_id == "s1"


def test_compaction_newer_than_the_latest_response(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", [assistant("m1", read=166_000), boundary(166_500)])
    reading = latest_context(path)
    assert reading is not None
    assert (reading.context_tokens, reading.compacted, reading.pre_tokens) == (None, True, 166_500)
    path = write(
        tmp_path / "u.jsonl",
        [assistant("m1", read=166_000), boundary(), user(), assistant("m2", read=30_000)],
    )
    reading = latest_context(path)
    assert reading is not None
    assert (reading.context_tokens, reading.compacted) == (30_001, False)
    stats = agent_stats(tmp_path / "t.jsonl")
    assert stats is not None
    assert (stats.turns_used, stats.context_tokens, stats.model) == (1, None, "claude-opus-4-6")


def test_truncated_last_line_falls_back_to_the_previous_response(tmp_path: Path) -> None:
    cut = json.dumps(assistant("m2", read=99)).encode()[:-7]
    path = write(tmp_path / "t.jsonl", [assistant("m1", read=10)], tail=cut)
    reading = latest_context(path)
    assert reading is not None
    assert reading.message_id == "m1"


def test_a_complete_last_line_without_newline_counts(tmp_path: Path) -> None:
    whole = json.dumps(assistant("m2", read=99)).encode()
    path = write(tmp_path / "t.jsonl", [assistant("m1", read=10)], tail=whole)
    reading = latest_context(path)
    assert reading is not None
    assert reading.message_id == "m2"


def test_huge_last_line_and_wrong_types(tmp_path: Path) -> None:
    weird = assistant("m2")
    weird["message"]["usage"] = "lots"
    records = [
        assistant("m1", read=10),
        user("q" * (3 * 1024 * 1024)),
        weird,
        {"type": "assistant", "message": ["not", "a", "dict"], "usage": 1},
        b'"usage"',
    ]
    path = write(tmp_path / "t.jsonl", records)
    reading = latest_context(path, first_chunk=1024)
    assert reading is not None
    assert reading.message_id == "m1"


def test_missing_empty_and_special_files(tmp_path: Path) -> None:
    assert latest_context(tmp_path / "missing.jsonl") is None
    assert agent_stats(tmp_path / "missing.jsonl") is None
    empty = tmp_path / "e.jsonl"
    empty.write_bytes(b"")
    assert latest_context(empty) is None
    stats = agent_stats(empty)
    assert stats is not None
    assert (stats.turns_used, stats.context_tokens) == (0, None)
    fifo = tmp_path / "p.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(TranscriptError):
        latest_context(fifo)  # never blocks on a FIFO
    with pytest.raises(TranscriptError):
        latest_context(tmp_path)


lines_strategy = st.lists(
    st.binary(max_size=300).map(lambda b: b.replace(b"\n", b"")),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(lines=lines_strategy, chunk=st.integers(1, 700), newline_at_end=st.booleans())
def test_lines_backwards_is_the_reverse_of_the_lines(
    lines: list[bytes], chunk: int, newline_at_end: bool
) -> None:
    data = b"\n".join(lines) + (b"\n" if newline_at_end else b"")
    got = list(lines_backwards(io.BytesIO(data), first_chunk=chunk))
    assert got == [line for line in reversed(data.split(b"\n")) if line.strip()]


def test_lines_backwards_drops_a_line_cut_by_the_allowance() -> None:
    data = b"a" * 100 + b"\n" + b"b" * 10 + b"\n"
    assert list(lines_backwards(io.BytesIO(data), first_chunk=4, max_bytes=50)) == [b"b" * 10]


def _scanned(path: Path) -> Transcript | None:
    """The full pass, ``None`` for a file it skips whole (empty, not JSON lines)."""
    try:
        return scan(path)
    except TranscriptError:
        return None


@settings(max_examples=60, deadline=None)
@given(cut=st.floats(0.0, 1.0))
def test_any_truncation_of_a_real_transcript_reads_like_the_full_pass(cut: float) -> None:
    source = corpus_path(f"{SPOTTER}/subagent.jsonl").read_bytes()
    data = source[: int(len(source) * cut)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        path.write_bytes(data)
        reading = latest_context(path, first_chunk=4096)
        transcript = _scanned(path)
    if transcript is None or not transcript.responses:
        assert reading is None
    else:
        assert reading is not None
        assert reading.context_tokens == transcript.responses[-1].context_tokens


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
garbage_line = st.one_of(
    st.binary(max_size=120).map(lambda b: b.replace(b"\n", b"")),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.builds(
        lambda msg, usage: json.dumps(
            {"type": "assistant", "isSidechain": False, "message": {**msg, "usage": usage}}
        ).encode(),
        st.dictionaries(st.sampled_from(["id", "model", "role"]), json_values, max_size=3),
        json_values,
    ),
    st.builds(
        lambda meta: json.dumps(
            {"type": "system", "subtype": "compact_boundary", "compactMetadata": meta}
        ).encode(),
        json_values,
    ),
)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(garbage_line, max_size=25), chunk=st.integers(1, 300))
def test_malformed_transcripts_never_raise(lines: list[bytes], chunk: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.jsonl"
        path.write_bytes(b"\n".join(lines))
        reading = latest_context(path, first_chunk=chunk)
        stats = agent_stats(path)
        transcript = _scanned(path)
    assert stats is not None
    if reading is not None and reading.context_tokens is not None:
        assert reading.context_tokens >= 0
    assert stats.turns_used >= 0
    assert transcript is None or transcript.requests >= 0
