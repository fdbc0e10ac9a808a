"""Subagent report-now (``PostToolUse`` with an ``agent_id``), through the real hook
entry, on transcripts laid out and shaped as Claude Code writes them."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget.bounds import (
    AGENT_MAX_TURNS,
    CALL_LINE_WAIT_S,
    HAIKU_CONTEXT_MAX,
    REPORT_MAX_WORDS,
    SUBAGENT_CONTEXT_MAX,
    TURNS_LEFT_AT,
)
from tests.claude._session import Session, note_of, run_hook
from tests.conftest import corpus_path


@pytest.fixture(autouse=True)
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    state = tmp_path / "state"
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(state))
    return state


@pytest.fixture
def session(tmp_path: Path) -> Session:
    return Session(tmp_path)


def test_below_both_bounds_adds_nothing(session: Session) -> None:
    session.start_agent("a1", "ctxrelay:investigator")
    session.respond("a1", 40_000)
    assert session.post_tool("a1", "ctxrelay:investigator") is None


def test_over_the_context_bound_the_note_says_why_and_asks_for_a_short_report(
    session: Session,
) -> None:
    session.start_agent("a1", "general-purpose")
    session.respond("a1", SUBAGENT_CONTEXT_MAX)  # at the bound: not over it
    assert session.post_tool("a1", "general-purpose") is None
    session.respond("a1", SUBAGENT_CONTEXT_MAX + 1)
    answer = session.post_tool("a1", "general-purpose")
    assert answer is not None
    assert answer["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    assert "decision" not in answer  # it tells, it never blocks
    note = note_of(answer)
    assert note is not None
    assert f"{SUBAGENT_CONTEXT_MAX + 1:,} tokens" in note
    assert f"{SUBAGENT_CONTEXT_MAX:,}-token bound" in note
    assert f"within {REPORT_MAX_WORDS} words" in note


def test_haiku_subagents_have_the_lower_bound(session: Session) -> None:
    session.start_agent("a1", "general-purpose")
    session.respond("a1", HAIKU_CONTEXT_MAX + 1, model="claude-haiku-4-5-20251001")
    note = note_of(session.post_tool("a1", "general-purpose"))
    assert note is not None
    assert f"{HAIKU_CONTEXT_MAX:,}-token bound" in note
    session.respond("a1", HAIKU_CONTEXT_MAX + 1, model="claude-sonnet-4-5")
    assert session.post_tool("a1", "general-purpose") is None


@pytest.mark.parametrize("name", sorted(AGENT_MAX_TURNS))
def test_turns_left_fires_at_exactly_turns_left_at(session: Session, name: str) -> None:
    max_turns = AGENT_MAX_TURNS[name]
    kind = f"ctxrelay:{name}"
    session.start_agent("a1", kind)
    for _ in range(max_turns - TURNS_LEFT_AT - 1):
        session.respond("a1", 20_000)
    assert session.post_tool("a1", kind) is None  # TURNS_LEFT_AT + 1 left
    session.respond("a1", 20_000)
    note = note_of(session.post_tool("a1", kind))
    assert note is not None
    used = max_turns - TURNS_LEFT_AT
    assert f"used {used} of your {max_turns} turns ({TURNS_LEFT_AT} left" in note


def test_installed_copies_of_the_agents_are_bound_too(session: Session) -> None:
    session.start_agent("a1", "investigator")
    for _ in range(AGENT_MAX_TURNS["investigator"] - 2):
        session.respond("a1", 1_000)
    assert note_of(session.post_tool("a1", "investigator")) is not None


def test_unknown_agent_types_have_no_turn_bound(session: Session) -> None:
    session.start_agent("a1", "general-purpose")
    for _ in range(200):
        session.respond("a1", 1_000)
    assert session.post_tool("a1", "general-purpose") is None


def test_one_response_written_as_several_lines_is_one_turn(session: Session) -> None:
    kind = "ctxrelay:investigator"
    session.start_agent("a1", kind)
    for _ in range(AGENT_MAX_TURNS["investigator"] - TURNS_LEFT_AT - 1):
        session.respond("a1", 1_000, blocks=3)
    assert session.post_tool("a1", kind) is None


def test_incremental_reads_count_the_same_as_one_pass(session: Session, state_dir: Path) -> None:
    kind = "ctxrelay:investigator"
    session.start_agent("a1", kind)
    for _ in range(AGENT_MAX_TURNS["investigator"] - TURNS_LEFT_AT - 1):
        session.respond("a1", 1_000, blocks=2)
        assert session.post_tool("a1", kind) is None
    shutil.rmtree(state_dir)  # the cursor is only a speed-up: a fresh pass agrees
    session.respond("a1", 1_000)
    assert note_of(session.post_tool("a1", kind)) is not None


def test_a_compaction_clears_the_context_but_not_the_turns(session: Session) -> None:
    session.start_agent("a1", "general-purpose")
    session.respond("a1", 150_000)
    with session.agent_file("a1").open("a") as f:
        f.write(json.dumps({"type": "system", "subtype": "compact_boundary"}) + "\n")
    assert session.post_tool("a1", "general-purpose") is None


def test_a_truncated_last_line_is_skipped_then_read_once_complete(session: Session) -> None:
    session.start_agent("a1", "general-purpose")
    session.respond("a1", 10_000)
    path = session.agent_file("a1")
    whole = path.read_bytes()
    session.respond("a1", 120_000)
    grown = path.read_bytes()
    cut = len(whole) + 40  # half of the new response's line
    path.write_bytes(grown[:cut])
    assert session.post_tool("a1", "general-purpose") is None
    path.write_bytes(grown)
    assert note_of(session.post_tool("a1", "general-purpose")) is not None


def test_a_replaced_transcript_is_read_afresh(session: Session) -> None:
    session.start_agent("a1", "general-purpose")
    session.respond("a1", 120_000)
    assert session.post_tool("a1", "general-purpose") is not None
    path = session.agent_file("a1")
    path.unlink()
    session.start_agent("a1", "general-purpose")
    session.respond("a1", 10_000)
    assert session.post_tool("a1", "general-purpose") is None


def test_a_missing_agent_file_or_a_bad_id_adds_nothing(session: Session) -> None:
    assert session.post_tool("nosuch", "general-purpose") is None
    assert session.post_tool("../../etc/passwd", "general-purpose") is None


def test_the_real_capture_payload_gets_the_note(tmp_path: Path) -> None:
    capture = corpus_path("corpora/claude-code-capture")
    payloads = [
        json.loads(line) for line in (capture / "hook-payloads.jsonl").read_text().splitlines()
    ]
    post = next(p for p in payloads if p["hook_event_name"] == "PostToolUse" and "agent_id" in p)
    # Lay the captured subagent transcript out as it stood when this hook fired: up to
    # the response that made the Bash call (105,005 tokens of context).
    sid = post["session_id"]
    agent_src = capture / "projects" / sid / "subagents" / f"agent-{post['agent_id']}.jsonl"
    lines = agent_src.read_text().splitlines(keepends=True)
    upto = next(i for i, line in enumerate(lines) if '"name":"Bash"' in line)
    dest = tmp_path / "projects" / sid / "subagents" / agent_src.name
    dest.parent.mkdir(parents=True)
    dest.write_text("".join(lines[: upto + 1]))
    post["transcript_path"] = str(tmp_path / "projects" / f"{sid}.jsonl")
    note = note_of(run_hook(post))
    assert note is not None
    assert "105,005 tokens" in note


def test_a_call_whose_response_is_not_written_yet_still_counts_its_turn(
    session: Session,
) -> None:
    # Claude Code 2.1.332 sometimes fires PostToolUse before it has written the response
    # that made the call; the hook counts that response from the payload's tool_use_id.
    kind = "ctxrelay:investigator"
    max_turns = AGENT_MAX_TURNS["investigator"]
    session.start_agent("a1", kind)
    for _ in range(max_turns - TURNS_LEFT_AT - 1):
        session.respond("a1", 20_000)  # its tool calls are all "toolu_0"
    ahead = session.payload(
        "PostToolUse",
        "a1",
        kind,
        tool_name="Bash",
        tool_input={"command": "ls"},
        tool_response={"stdout": "", "stderr": "", "interrupted": False},
        tool_use_id="toolu_not_written_yet",
    )
    note = note_of(run_hook(ahead))
    assert note is not None
    used = max_turns - TURNS_LEFT_AT
    assert f"used {used} of your {max_turns} turns ({TURNS_LEFT_AT} left" in note
    # Once the response is written, the same call is read from the transcript: no
    # double count.
    session.respond("a1", 20_000)
    note = note_of(session.post_tool("a1", kind))
    assert note is not None
    assert f"used {used} of your {max_turns} turns" in note


def _post(session: Session, agent: str, kind: str, call: str) -> dict[str, Any]:
    return session.payload(
        "PostToolUse",
        agent,
        kind,
        tool_name="Bash",
        tool_input={"command": "ls"},
        tool_response={"stdout": "", "stderr": "", "interrupted": False},
        tool_use_id=call,
    )


def test_a_response_written_150_ms_after_the_hook_starts_is_the_one_counted(
    session: Session,
) -> None:
    # Claude Code writes transcript lines in batches: the response that made the call
    # (now over the context bound) lands after the hook has started.
    kind = "ctxrelay:implementer"
    session.start_agent("a1", kind)
    session.respond("a1", 20_000)
    late = threading.Timer(0.15, lambda: session.respond("a1", 150_000, call="toolu_late"))
    late.start()
    try:
        note = note_of(run_hook(_post(session, "a1", kind, "toolu_late")))
    finally:
        late.join()
    assert note is not None
    assert "150,000 tokens" in note


def test_a_response_that_never_appears_costs_at_most_the_bound(session: Session) -> None:
    kind = "ctxrelay:implementer"
    session.start_agent("a1", kind)
    session.respond("a1", 20_000)
    start = time.monotonic()
    assert run_hook(_post(session, "a1", kind, "toolu_never")) is None  # below the bounds
    # A generous ceiling (a loaded machine), not a timing assertion: it gave up.
    assert time.monotonic() - start < CALL_LINE_WAIT_S + 5
