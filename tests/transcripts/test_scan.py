"""The analyzer's full pass, on the real corpora and on synthetic edge cases."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts import Usage, scan
from tests.conftest import corpus_path
from tests.transcripts._lines import assistant, boundary, user, write

SPOTTER = "corpora/claude-code-transcripts/spotter"
USAGE_KEYS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)

# Unique message ids of each real transcript's main chain: facts of the fixed corpus,
# cross-checked below against a naive reader that parses every line.
EXPECTED_REQUESTS = {
    "258c7280-ae70-4798-800f-63464d01a85d.jsonl": 152,
    "4d5611e5-241a-462a-8d15-5122611a9569.jsonl": 139,
    "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl": 143,
    "short.jsonl": 1,
    "subagent.jsonl": 12,
    "tool_heavy.jsonl": 4,
}


def naive(path: Path) -> tuple[dict[str, dict[str, int]], list[int]]:
    """Parse every line; last complete line per id wins; compaction pre-tokens."""
    usage: dict[str, dict[str, int]] = {}
    pre: list[int] = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "system" and record.get("subtype") == "compact_boundary":
            pre.append(record["compactMetadata"]["preTokens"])
        if record.get("type") != "assistant" or record.get("isSidechain"):
            continue
        message = record["message"]
        u = message["usage"]
        old = usage.get(message["id"])
        if old is None or u["output_tokens"] >= old["output_tokens"]:
            usage[message["id"]] = {k: u[k] for k in USAGE_KEYS if k in u}
    return usage, pre


@pytest.mark.parametrize("name", sorted(EXPECTED_REQUESTS))
def test_real_transcripts_match_a_naive_reader(name: str) -> None:
    path = corpus_path(f"{SPOTTER}/{name}")
    transcript = scan(path)
    reference, pre = naive(path)
    assert transcript.requests == EXPECTED_REQUESTS[name] == len(reference)
    assert [r.message_id for r in transcript.responses] == list(reference)
    total = transcript.usage
    for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
        assert getattr(total, key) == sum(u[key] for u in reference.values())
    assert total.output_tokens == sum(u["output_tokens"] for u in reference.values())
    assert [c.pre_tokens for c in transcript.compactions] == pre
    assert transcript.malformed_lines == 0
    assert transcript.model == "claude-opus-4-6"
    assert transcript.session_id is not None


def test_compaction_restarts_the_chain_on_a_real_session() -> None:
    transcript = scan(corpus_path(f"{SPOTTER}/258c7280-ae70-4798-800f-63464d01a85d.jsonl"))
    (compaction,) = transcript.compactions
    assert compaction.pre_tokens == 167_094
    assert compaction.trigger == "auto"
    assert compaction.summary_chars > 1000
    before = transcript.responses[compaction.after_requests - 1]
    after = transcript.responses[compaction.after_requests]
    assert (before.segment, after.segment) == (0, 1)
    # The chain restarts much smaller than it ended.
    assert after.context_tokens < before.context_tokens / 3
    assert transcript.peak_context_tokens == 166_759


def test_subagent_files_are_their_own_chain() -> None:
    path = corpus_path(f"{SPOTTER}/8463c716-a2ea-4c14-9efa-87158ebd9f20/subagents")
    agent = scan(path / "agent-a7be2f0.jsonl", agent=True)
    assert agent.requests == 13
    assert agent.model == "claude-haiku-4-5-20251001"
    # Read as a main chain, every line of a subagent file is an inline sidechain.
    as_main = scan(path / "agent-a7be2f0.jsonl")
    assert as_main.requests == 0
    assert len(as_main.sidechain_responses) == 13


def test_current_capture_reads() -> None:
    path = corpus_path("corpora/claude-code-capture/projects")
    (main,) = sorted(path.glob("*.jsonl"))
    transcript = scan(main)
    assert transcript.requests == 4
    assert transcript.version == "2.1.197"
    assert transcript.session_id == main.stem


def test_dedup_keeps_the_most_complete_line(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.jsonl",
        [
            assistant("m1", created=100, read=10, output=2),
            user(),
            assistant("m1", created=100, read=10, output=50),
            assistant("m2", created=5, read=110, output=7),
        ],
    )
    transcript = scan(path)
    assert transcript.requests == 2
    assert transcript.usage == Usage(2, 105, 120, 57)
    assert transcript.context_curve == [111, 116]


def test_inline_sidechains_are_not_the_main_chain(tmp_path: Path) -> None:
    path = write(
        tmp_path / "old.jsonl",
        [
            assistant("m1", read=1000),
            assistant("s1", read=90_000, sidechain=True),
            assistant("m2", read=1100),
        ],
    )
    transcript = scan(path)
    assert [r.message_id for r in transcript.responses] == ["m1", "m2"]
    assert [r.message_id for r in transcript.sidechain_responses] == ["s1"]
    assert transcript.peak_context_tokens == 1101


def test_boundary_and_summary(tmp_path: Path) -> None:
    summary = user("x" * 400, isCompactSummary=True)
    path = write(
        tmp_path / "c.jsonl",
        [assistant("m1", read=160_000), boundary(160_001), summary, assistant("m2", read=30_000)],
    )
    transcript = scan(path)
    (c,) = transcript.compactions
    assert (c.pre_tokens, c.after_requests, c.summary_chars) == (160_001, 1, 400)
    assert [r.segment for r in transcript.responses] == [0, 1]
    assert transcript.final_context_tokens == 30_001


def test_truncated_last_line_and_garbage_are_skipped(tmp_path: Path) -> None:
    cut = json.dumps(assistant("m3", read=5)).encode()[:-20]
    path = write(
        tmp_path / "t.jsonl",
        [
            assistant("m1", read=10),
            b'{"type": "assistant", "usage": {"output_tokens": oops',
            b'["usage", {"output_tokens": 1}]',
            b"\xff\xfe not utf-8",
            {"type": "brand-new-kind", "usage": {"input_tokens": 9}},
            assistant("m2", read=20),
        ],
        tail=cut,
    )
    transcript = scan(path)
    assert [r.message_id for r in transcript.responses] == ["m1", "m2"]
    assert transcript.malformed_lines == 3  # the bad JSON, the list and the cut last line


def test_wrong_types_count_zero_and_never_raise(tmp_path: Path) -> None:
    weird = assistant("m2")
    weird["message"]["usage"] = {
        "input_tokens": "12",
        "cache_read_input_tokens": -5,
        "cache_creation_input_tokens": 3.0,
        "output_tokens": True,
        "cache_creation": "no",
    }
    no_usage = assistant("m3")
    no_usage["message"]["usage"] = [1, 2]
    bad_id = assistant("m4")
    bad_id["message"]["id"] = 7
    synthetic = assistant("m5", model="<synthetic>")
    path = write(
        tmp_path / "t.jsonl",
        [assistant("m1", read=10), weird, no_usage, bad_id, synthetic, {"message": "x"}],
    )
    transcript = scan(path)
    assert [r.message_id for r in transcript.responses] == ["m1", "m2"]
    assert transcript.responses[1].usage == Usage(0, 3, 0, 0)


def test_huge_line(tmp_path: Path) -> None:
    big = user("y" * (8 * 1024 * 1024))
    path = write(tmp_path / "t.jsonl", [assistant("m1", read=10), big, assistant("m2", read=11)])
    assert scan(path).requests == 2


def test_empty_missing_and_not_a_file(tmp_path: Path) -> None:
    empty = tmp_path / "e.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(TranscriptError, match="empty") as caught:
        scan(empty)
    assert (caught.value.path, caught.value.reason) == (str(empty), "empty")
    with pytest.raises(TranscriptError, match="no such file"):
        scan(tmp_path / "missing.jsonl")
    with pytest.raises(TranscriptError, match=r"not a regular file \(a directory\)"):
        scan(tmp_path)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(TranscriptError, match=r"not a regular file \(a FIFO\)"):
        scan(fifo)
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(loop)
    with pytest.raises(TranscriptError, match="symbolic links") as caught:
        scan(loop)
    assert str(caught.value).count(str(loop)) == 1
