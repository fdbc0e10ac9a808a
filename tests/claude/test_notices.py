"""A subagent that stops at its maxTurns without a report: the main thread is told, by
its next hook answer, which subagent stopped short and where its transcript is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.budget.bounds import AGENT_MAX_TURNS
from ctxrelay.claude._notices import ended_agents, main_thread_notice, render
from tests.claude._session import Session, note_of, run_hook

KIND = "ctxrelay:investigator"
LIMIT = AGENT_MAX_TURNS["investigator"]


@pytest.fixture(autouse=True)
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    state = tmp_path / "state"
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(state))
    return state


@pytest.fixture
def session(tmp_path: Path) -> Session:
    return Session(tmp_path)


def stopped_at_limit(session: Session, agent_id: str = "a1") -> None:
    session.start_agent(agent_id, KIND)
    for _ in range(LIMIT):
        session.respond(agent_id, 5_000)  # every response a tool call: no report


def task_notification(agent_id: str) -> str:
    # The shape Claude Code 2.1.332 submits when a background subagent ends.
    return (
        "<task-notification>\n"
        f"<task-id>{agent_id}</task-id>\n"
        "<tool-use-id>toolu_a6a1feca363b4939868f8f52</tool-use-id>\n"
        "<status>completed</status>\n"
        f'<summary>Agent "job" stopped at its {LIMIT}-turn limit (partial result)</summary>\n'
        "</task-notification>"
    )


def test_a_background_stop_reaches_the_next_prompt_once(session: Session) -> None:
    stopped_at_limit(session)
    payload = session.payload("UserPromptSubmit", prompt=task_notification("a1"))
    answer = run_hook(payload)
    assert answer is not None
    assert answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    note = note_of(answer)
    assert note is not None
    assert f"Subagent a1 ({KIND}) reached its turn limit ({LIMIT} of {LIMIT} turns)" in note
    # Claude Code's own way to go on with a subagent that stopped at its limit
    assert "Continue it with SendMessage (to: 'a1') and ask for its report" in note
    assert str(session.agent_file("a1")) in note
    assert run_hook(payload) is None  # said once


def test_a_foreground_stop_reaches_the_agent_calls_own_result(session: Session) -> None:
    stopped_at_limit(session)
    payload = session.payload(
        "PostToolUse",
        tool_name="Agent",
        tool_input={"description": "job", "prompt": "look", "subagent_type": KIND},
        tool_response={"status": "completed", "agentId": "a1", "agentType": KIND},
    )
    note = note_of(run_hook(payload))
    assert note is not None
    assert str(session.agent_file("a1")) in note


def test_a_subagent_that_reported_is_not_a_notice(session: Session) -> None:
    session.start_agent("a1", KIND)
    for _ in range(3):
        session.respond("a1", 5_000)
    session.respond("a1", 5_000, tool=None)
    assert run_hook(session.payload("UserPromptSubmit", prompt=task_notification("a1"))) is None
    stop = session.payload(
        "SubagentStop",
        "a1",
        KIND,
        agent_transcript_path=str(session.agent_file("a1")),
        last_assistant_message="Subagent report: done.",
    )
    assert run_hook(stop) is None
    assert run_hook(session.payload("UserPromptSubmit", prompt="next")) is None


def test_a_background_launch_has_not_ended(session: Session) -> None:
    session.start_agent("a1", KIND)
    session.respond("a1", 5_000)  # still working: its latest response is a tool call
    payload = session.payload(
        "PostToolUse",
        tool_name="Agent",
        tool_response={"isAsync": True, "status": "async_launched", "agentId": "a1"},
    )
    assert ended_agents(payload) == []
    assert run_hook(payload) is None


def test_subagent_stop_queues_a_notice_that_any_main_thread_hook_delivers(
    session: Session,
) -> None:
    stopped_at_limit(session)
    stop = session.payload(
        "SubagentStop", "a1", KIND, agent_transcript_path=str(session.agent_file("a1"))
    )
    assert run_hook(stop) is None  # the subagent has ended: nothing to tell it
    # The next main-thread answer (here an ordinary tool result; Stop uses the same call).
    later = session.payload("PostToolUse", tool_name="Read", tool_response={})
    note = main_thread_notice(later)
    assert note is not None
    assert "Subagent a1" in note
    assert main_thread_notice(later) is None
    assert run_hook(session.payload("UserPromptSubmit", prompt=task_notification("a1"))) is None


def test_notices_of_several_agents_come_together(session: Session) -> None:
    stopped_at_limit(session, "a1")
    stopped_at_limit(session, "a2")
    prompt = task_notification("a1") + "\n" + task_notification("a2")
    note = note_of(run_hook(session.payload("UserPromptSubmit", prompt=prompt)))
    assert note is not None
    assert "Subagent a1" in note
    assert "Subagent a2" in note


def test_a_subagents_own_prompt_hook_gets_nothing(session: Session) -> None:
    stopped_at_limit(session)
    payload = session.payload("UserPromptSubmit", "a2", KIND, prompt=task_notification("a1"))
    assert run_hook(payload) is None


def test_render_of_nothing_is_none() -> None:
    assert render([]) is None


def test_a_queued_notice_reaches_an_ordinary_main_thread_tool_result(session: Session) -> None:
    stopped_at_limit(session)
    later = session.payload("PostToolUse", tool_name="Read", tool_response={})
    assert run_hook(later) is None  # nothing queued: the hook does not even look
    stop = session.payload(
        "SubagentStop", "a1", KIND, agent_transcript_path=str(session.agent_file("a1"))
    )
    assert run_hook(stop) is None
    note = note_of(run_hook(later))
    assert note is not None
    assert "Subagent a1" in note
    assert run_hook(later) is None


def test_a_subagent_stop_naming_a_file_elsewhere_is_not_trusted(
    session: Session, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text("")
    stop = session.payload("SubagentStop", "a9", KIND, agent_transcript_path=str(elsewhere))
    assert run_hook(stop) is None
    assert run_hook(session.payload("UserPromptSubmit", prompt="next")) is None


def test_an_ended_agents_cursor_is_removed(session: Session, state_dir: Path) -> None:
    session.start_agent("a1", KIND)
    session.respond("a1", 5_000)
    assert session.post_tool("a1", KIND) is None
    cursors = list(state_dir.glob("claude/agents/*/a1.json"))
    assert len(cursors) == 1
    session.respond("a1", 5_000, tool=None)
    stop = session.payload(
        "SubagentStop", "a1", KIND, agent_transcript_path=str(session.agent_file("a1"))
    )
    assert run_hook(stop) is None
    assert not cursors[0].exists()


def test_a_subagent_that_ran_out_of_context_is_told_as_an_overflow(session: Session) -> None:
    session.start_agent("a1", KIND)
    for _ in range(5):
        session.respond("a1", 40_000)
    # What Claude Code 2.1.332 writes when it refuses the next request as too long.
    refusal = {
        "isSidechain": True,
        "agentId": "a1",
        "type": "assistant",
        "message": {
            "id": "msg_synthetic",
            "model": "<synthetic>",
            "role": "assistant",
            "content": [{"type": "text", "text": "Prompt is too long"}],
        },
        "error": "invalid_request",
        "isApiErrorMessage": True,
    }
    with session.agent_file("a1").open("a") as f:
        f.write(json.dumps(refusal, separators=(",", ":")) + "\n")
    note = note_of(run_hook(session.payload("UserPromptSubmit", prompt=task_notification("a1"))))
    assert note is not None
    assert f"Subagent a1 ({KIND}) ran out of context after 5 turns" in note
    assert "stopped after" not in note
    assert "SendMessage" not in note  # a full context cannot be continued
