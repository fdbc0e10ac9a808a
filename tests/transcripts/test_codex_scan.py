"""The analyzer's read of a Codex rollout: what each response and compaction says."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts import Usage
from ctxrelay.transcripts._codex import (
    LEGACY_MODEL,
    CodexResponse,
    file_shape,
    is_rollout,
    read_rollout,
)
from tests.transcripts._codex_lines import THREAD, Rollout, dumps
from tests.transcripts._lines import assistant, user, write

if TYPE_CHECKING:
    from pathlib import Path


def test_each_response_once_with_the_model_of_its_turn(tmp_path: Path) -> None:
    rollout = Rollout(cwd="/home/u/app").turn("gpt-5.4")
    rollout.response("resp_1", 25_000, 24_500, output=40, reasoning=8)
    rollout.turn("gpt-5.3-codex", "turn-2").response("resp_2", 30_000, 0, output=90, reasoning=0)
    rollout.response("resp_2", 31_000)  # the same response again: counted once
    read = read_rollout(rollout.write(tmp_path / "r.jsonl"))
    assert (read.thread_id, read.cwd, read.cli_version, read.parent_id) == (
        THREAD,
        "/home/u/app",
        "0.171.0",
        None,
    )
    assert [(r.response_id, r.model) for r in read.responses] == [
        ("resp_1", "gpt-5.4"),
        ("resp_2", "gpt-5.3-codex"),
    ]
    first = read.responses[0]
    assert first == CodexResponse("resp_1", "gpt-5.4", 25_000, 24_500, 40, 8, 0, first.timestamp)
    assert first.timestamp is not None
    assert first.timestamp.endswith("Z")
    assert first.context_tokens == 25_040
    # priced as uncached input, cache reads and output
    assert first.usage == Usage(500, 0, 24_500, 40)
    assert read.duplicate_responses == 1


def test_the_token_count_events_are_not_responses(tmp_path: Path) -> None:
    rollout = Rollout().turn().response("resp_1", 100, token_count=True)
    rollout.lines.append(rollout.lines[-1])  # a token_count written twice, as after a revert
    read = read_rollout(rollout.write(tmp_path / "r.jsonl"))
    assert [r.response_id for r in read.responses] == ["resp_1"]


def test_a_compaction_starts_a_segment(tmp_path: Path) -> None:
    rollout = Rollout().turn().response("resp_1", 150_000).response("resp_2", 160_000)
    rollout.compaction("s" * 1_200).turn(turn_id="turn-2").response("resp_3", 9_000)
    read = read_rollout(rollout.write(tmp_path / "r.jsonl"))
    assert [r.segment for r in read.responses] == [0, 0, 1]
    (compaction,) = read.compactions
    assert (compaction.pre_tokens, compaction.after_requests, compaction.summary_chars) == (
        160_040,
        2,
        1_200,
    )
    transcript = read.transcript()
    assert transcript.format == "codex"
    assert transcript.compactions == read.compactions
    assert [r.segment for r in transcript.responses] == [0, 0, 1]
    assert transcript.context_curve == [150_000, 160_000, 9_000]  # each request's input


def test_a_subagents_rollout_names_its_parent(tmp_path: Path) -> None:
    rollout = Rollout("01a23321-3468-7a32-a69f-4a86e8c6782d", parent=THREAD)
    read = read_rollout(rollout.turn().response("resp_1", 100).write(tmp_path / "r.jsonl"))
    assert read.parent_id == THREAD
    assert read.transcript().parent_id == THREAD
    # the parent given only in source.subagent.thread_spawn
    del rollout.lines[0]["payload"]["parent_thread_id"]
    assert read_rollout(rollout.write(tmp_path / "s.jsonl")).parent_id == THREAD


def test_a_response_before_any_turn_context_is_priced_as_ccusage_prices_it(
    tmp_path: Path,
) -> None:
    # ccusage's fallback for the Codex builds that wrote no model: gpt-5
    read = read_rollout(Rollout().response("resp_1", 100).write(tmp_path / "r.jsonl"))
    assert [r.model for r in read.responses] == [LEGACY_MODEL] == ["gpt-5"]
    # a token_count naming the model (info.model, as ccusage reads it) sets it
    rollout = Rollout().response("resp_1", 100)
    rollout.lines = [line for line in rollout.lines if line["type"] != "token_usage_record"]
    rollout.lines[-1]["payload"]["info"]["model"] = "gpt-5.4"
    read = read_rollout(rollout.write(tmp_path / "m.jsonl"))
    assert [r.model for r in read.responses] == ["gpt-5.4"]


def test_bad_lines_are_counted_and_passed_over(tmp_path: Path) -> None:
    rollout = Rollout().turn().response("resp_1", 100)
    data = (
        rollout.data() + b'{"type":"token_usage_record","payload":[1]}\nnot json "turn_context"\n'
    )
    data += (
        b'{"timestamp":"x","type":"token_usage_record","payload":{"response_id":"r9","usage":{"in'
    )
    path = tmp_path / "r.jsonl"
    path.write_bytes(data)
    read = read_rollout(path)
    assert [r.response_id for r in read.responses] == ["resp_1"]
    assert read.malformed_lines == 2  # the line that is not JSON and the cut last line


def test_files_that_are_not_rollouts_are_refused(tmp_path: Path) -> None:
    (tmp_path / "e.jsonl").write_bytes(b"")
    (tmp_path / "t.jsonl").write_bytes(b"hello\n")
    with pytest.raises(TranscriptError, match="empty"):
        read_rollout(tmp_path / "e.jsonl")
    with pytest.raises(TranscriptError, match="not JSON lines"):
        read_rollout(tmp_path / "t.jsonl")
    with pytest.raises(TranscriptError, match="no such file"):
        read_rollout(tmp_path / "missing.jsonl")


def test_a_rollout_is_told_from_a_claude_transcript(tmp_path: Path) -> None:
    assert is_rollout(Rollout().turn().write(tmp_path / "r.jsonl"))
    # a rollout whose first line is not its session meta (the file was cut at its head)
    rollout = Rollout().turn().response("resp_1", 100)
    (tmp_path / "h.jsonl").write_bytes(b"".join(dumps(x) + b"\n" for x in rollout.lines[1:]))
    assert is_rollout(tmp_path / "h.jsonl")
    claude = write(tmp_path / "c.jsonl", [user("hi"), assistant("m1", read=5)])
    assert not is_rollout(claude)
    assert not is_rollout(tmp_path / "missing.jsonl")
    # without the ordinal (older Codex, and ccusage's tests), and with a first line of
    # 2 MB that the head read holds only the start of
    plain = [{k: v for k, v in x.items() if k != "ordinal"} for x in rollout.lines[1:]]
    (tmp_path / "o.jsonl").write_bytes(b"".join(dumps(x) + b"\n" for x in plain))
    assert file_shape(tmp_path / "o.jsonl") == "codex"
    big = {"timestamp": "t", "type": "compacted", "payload": {"replacement_history": "x" * 2**21}}
    (tmp_path / "b.jsonl").write_bytes(dumps(big) + b"\n")
    assert file_shape(tmp_path / "b.jsonl") == "codex"
    assert file_shape(claude) == "claude"
    # a line of neither: its place decides (a folder named sessions is Codex's)
    (tmp_path / "sessions").mkdir()
    for folder in (tmp_path, tmp_path / "sessions"):
        (folder / "x.jsonl").write_bytes(b'{"a": 1}\n')
        assert file_shape(folder / "x.jsonl") is None
    assert not is_rollout(tmp_path / "x.jsonl")
    assert is_rollout(tmp_path / "sessions" / "x.jsonl")


def test_a_rollout_without_usage_records_is_counted_from_its_token_counts(
    tmp_path: Path,
) -> None:
    # Codex before token_usage_record: each token_count whose total grew is a response.
    rollout = Rollout().turn("gpt-5.4").response("resp_1", 10_000, 9_000)
    rollout.lines.append(rollout.lines[-1])  # written twice: its total did not change
    rollout.response("resp_2", 20_000, 19_000, output=70).compaction()
    rollout.turn("gpt-5.5", "turn-2").response("resp_3", 5_000)
    rollout.lines = [line for line in rollout.lines if line["type"] != "token_usage_record"]
    read = read_rollout(rollout.write(tmp_path / "r.jsonl"))
    assert [(r.response_id, r.model, r.input_tokens, r.output_tokens) for r in read.responses] == [
        ("token_count-1", "gpt-5.4", 10_000, 40),
        ("token_count-2", "gpt-5.4", 20_000, 70),
        ("token_count-3", "gpt-5.5", 5_000, 40),
    ]
    assert [r.segment for r in read.responses] == [0, 0, 1]
    (compaction,) = read.compactions
    assert (compaction.pre_tokens, compaction.after_requests) == (20_070, 2)
    # With its records, the same rollout counts them (and the compaction against them).
    assert (
        read_rollout(Rollout().turn().response("r", 1_000).write(tmp_path / "s.jsonl"))
        .responses[0]
        .response_id
        == "r"
    )
