"""The Codex hook's reader: the context now, from the tail of a rollout."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from typing import TYPE_CHECKING

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxrelay.transcripts import CodexContext, codex_context, read_rollout
from tests.transcripts._codex_lines import Rollout

if TYPE_CHECKING:
    from pathlib import Path


def test_context_is_the_newest_responses_input_plus_output(tmp_path: Path) -> None:
    path = (
        Rollout()
        .turn("gpt-5.4", window=190_000)
        .response("resp_1", 25_000, 24_000, output=40)
        .response("resp_2", 30_000, 29_500, output=120, reasoning=30)
        .write(tmp_path / "r.jsonl")
    )
    assert codex_context(path) == CodexContext(30_120, "gpt-5.4", "resp_2", 190_000)


def test_the_model_is_the_newest_turn_context(tmp_path: Path) -> None:
    # A new turn on another model began after the newest response: the model now is it.
    path = (
        Rollout()
        .turn("gpt-5.5")
        .response("resp_1", 10_000)
        .turn("gpt-5.3-codex", "turn-2")
        .write(tmp_path / "r.jsonl")
    )
    found = codex_context(path)
    assert found is not None
    assert (found.context_tokens, found.model, found.response_id) == (
        10_040,
        "gpt-5.3-codex",
        "resp_1",
    )


def test_a_compaction_resets_the_context(tmp_path: Path) -> None:
    rollout = Rollout().turn().response("resp_1", 150_000, 149_000).response("resp_2", 155_000)
    rollout.compaction()
    path = rollout.write(tmp_path / "r.jsonl")
    found = codex_context(path)
    assert found is not None
    assert found.compacted
    assert found.context_tokens is None
    assert found.pre_tokens == 155_040  # the response before the compaction
    assert found.model == "gpt-5.5"
    # the next response is the context again
    rollout.turn(turn_id="turn-2").response("resp_3", 8_000)
    rollout.write(path)
    assert codex_context(path) == CodexContext(8_040, "gpt-5.5", "resp_3", 258_400)


def test_the_zero_token_count_alone_is_a_reset(tmp_path: Path) -> None:
    # The reset marker without its compacted line (cut off by the tail read, or written
    # alone): still no context.
    rollout = Rollout().turn().response("resp_1", 50_000).compaction()
    del rollout.lines[-2]  # the compacted line
    found = codex_context(rollout.write(tmp_path / "r.jsonl"))
    assert found is not None
    assert (found.compacted, found.context_tokens, found.pre_tokens) == (True, None, 50_040)


def test_the_compacted_lines_usage_record_is_not_a_response(tmp_path: Path) -> None:
    # ``compacted`` carries ``latest_token_usage_record``: a key, not a response line.
    rollout = Rollout().turn().compaction()
    del rollout.lines[-1]
    found = codex_context(rollout.write(tmp_path / "r.jsonl"))
    assert found == CodexContext(None, "gpt-5.5", None, 258_400, compacted=True)


def test_no_reading(tmp_path: Path) -> None:
    assert codex_context(tmp_path / "missing.jsonl") is None
    os.mkfifo(tmp_path / "fifo.jsonl")
    assert codex_context(tmp_path / "fifo.jsonl") is None  # never opened for a blocking read
    assert codex_context(Rollout().turn().write(tmp_path / "r.jsonl")) is None
    (tmp_path / "e.jsonl").write_bytes(b"")
    assert codex_context(tmp_path / "e.jsonl") is None


def test_a_line_cut_mid_write_is_passed_over(tmp_path: Path) -> None:
    rollout = Rollout().turn().response("resp_1", 12_000)
    cut = (
        rollout.data() + b'{"timestamp":"x","type":"token_usage_record","payload":{"usage":{"input'
    )
    path = tmp_path / "r.jsonl"
    path.write_bytes(cut)
    found = codex_context(path)
    assert found is not None
    assert (found.context_tokens, found.response_id) == (12_040, "resp_1")


def test_reads_the_tail_not_the_file(tmp_path: Path) -> None:
    rollout = Rollout().turn().response("resp_1", 5_000)
    for _ in range(12):
        rollout.message("user", "z" * 1_000_000)
    rollout.response("resp_2", 42_000)
    path = rollout.write(tmp_path / "r.jsonl")
    # the model's turn_context is 12 MB back: the response is found, the model is not
    found = codex_context(path, max_bytes=1024 * 1024)
    assert found is not None
    assert (found.context_tokens, found.model) == (42_040, None)
    assert codex_context(path) == CodexContext(42_040, "gpt-5.5", "resp_2", 258_400)


def test_the_hook_reader_needs_only_the_standard_library() -> None:
    heavy = ("msgspec", "ctxrelay.transcripts._scan")
    code = (
        "import sys, ctxrelay.transcripts as t; t.codex_context; "
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.sampled_from(["gpt-5.5", "gpt-5.4", "gpt-5.3-codex"])),
        st.tuples(st.just("response"), st.integers(0, 300_000), st.integers(0, 5_000)),
        st.tuples(st.just("compaction")),
        st.tuples(st.just("user"), st.integers(0, 3_000)),
    ),
    max_size=14,
)


@settings(max_examples=80, deadline=None)
@given(steps=_STEPS, cut=st.integers(0, 400))
def test_the_tail_agrees_with_the_full_read(steps: list[tuple[object, ...]], cut: int) -> None:
    # Whatever the rollout holds, and cut anywhere in its last lines as while Codex
    # writes it, the tail reads what the analyzer's full pass ends with.
    rollout = Rollout()
    for n, step in enumerate(steps):
        if step[0] == "turn":
            rollout.turn(str(step[1]), f"turn-{n}")
        elif step[0] == "response":
            rollout.response(f"resp_{n}", int(str(step[1])), output=int(str(step[2])))
        elif step[0] == "compaction":
            rollout.compaction()
        else:
            rollout.message("user", "z" * int(str(step[1])))
    data = rollout.data()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.jsonl")
        with open(path, "wb") as f:
            f.write(data[: max(len(data) - cut, 1)])
        found = codex_context(path, first_chunk=512)
        read = read_rollout(path)
    models = [line["payload"]["model"] for line in rollout.lines if line["type"] == "turn_context"]
    last = read.responses[-1] if read.responses else None
    compacted = bool(read.compactions) and read.compactions[-1].after_requests == len(
        read.responses
    )
    if last is None and not compacted:
        assert found is None or (found.context_tokens is None and found.compacted)
        return
    assert found is not None
    if compacted:
        assert (found.context_tokens, found.compacted) == (None, True)
        assert found.pre_tokens == read.compactions[-1].pre_tokens
    else:
        assert last is not None
        assert (found.context_tokens, found.response_id) == (last.context_tokens, last.response_id)
    # the newest turn_context the file still holds whole
    assert found.model in {None, *models}
