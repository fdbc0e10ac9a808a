"""The Stop hook: triggers, the three modes, once per episode, the auto handoff's waits and
retry, through the real hook entry and real transcript files."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from ctxrelay.budget.bounds import (
    AGENT_MAX_TURNS,
    CONTEXT_PERCENT,
    HANDOFF_RETRY_MAX,
    HANDOFF_WAIT_TURNS,
    STOP_REPLY_WAIT_S,
)
from ctxrelay.claude import _state
from ctxrelay.claude._limit import usable_limit
from ctxrelay.claude.config import set_value
from tests.claude._handoff import (
    SESSION,
    Transcript,
    continued,
    isolate,
    run_hook,
    stop_payload,
)
from tests.claude._session import Session

WINDOW = 200_000
AT = WINDOW * CONTEXT_PERCENT // 100


@pytest.fixture
def project(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return isolate(monkeypatch, tmp_path)


@pytest.fixture
def transcript(tmp_path: Path) -> Transcript:
    return Transcript(tmp_path / "home" / ".claude" / "projects" / "p" / f"{SESSION}.jsonl")


def _turn(
    t: Transcript, context: int, tools: list[tuple[str, dict[str, object]]] | None = None
) -> None:
    t.prompt("go on")
    if tools:
        t.assistant(context=context - 100, tools=tools)
    t.assistant(context=context, text="done")


def test_below_the_point_and_no_task_says_nothing(project: Path, transcript: Transcript) -> None:
    _turn(transcript, AT - 1)
    assert run_hook(stop_payload(transcript, project)) is None


def test_manual_hint_at_the_point_once_per_episode(project: Path, transcript: Transcript) -> None:
    _turn(transcript, AT)
    answer = run_hook(stop_payload(transcript, project))
    assert answer is not None
    assert "decision" not in answer  # manual never makes Claude continue
    hint = answer["systemMessage"]
    assert "/ctxrelay:handoff" in hint
    assert f"{AT:,} tokens" in hint
    assert f"{CONTEXT_PERCENT}%" in hint
    _turn(transcript, AT + 5_000)
    assert run_hook(stop_payload(transcript, project)) is None  # once per episode


def test_manual_hint_for_a_completed_task_is_its_own_kind(
    project: Path, transcript: Transcript
) -> None:
    _turn(transcript, AT)
    assert run_hook(stop_payload(transcript, project)) is not None  # context
    _turn(transcript, AT + 1_000, [("TaskUpdate", {"taskId": "1", "status": "completed"})])
    answer = run_hook(stop_payload(transcript, project))
    assert answer is not None
    assert "task was just marked completed" in answer["systemMessage"]
    _turn(transcript, AT + 2_000, [("TaskUpdate", {"taskId": "2", "status": "completed"})])
    assert run_hook(stop_payload(transcript, project)) is None


def test_todowrite_of_older_versions_counts_and_a_failed_call_does_not(
    project: Path, transcript: Transcript
) -> None:
    item = {"content": "a", "status": "completed", "activeForm": "A"}
    todo: dict[str, object] = {"todos": [item]}
    _turn(transcript, 1_000, [("TodoWrite", todo)])
    transcript.assistant(context=1_000)  # make sure the failed call below is its own turn
    transcript.prompt("again")
    transcript.assistant(
        context=1_100, tools=[("TaskUpdate", {"status": "completed"})], errors=frozenset({0})
    )
    transcript.assistant(context=1_200, text="done")
    # The newest turn's only completion failed: nothing.
    assert run_hook(stop_payload(transcript, project)) is None
    transcript.prompt("and again")
    transcript.assistant(context=1_300, tools=[("TodoWrite", todo)])
    transcript.assistant(context=1_400, text="done")
    answer = run_hook(stop_payload(transcript, project))
    assert answer is not None
    assert "task" in answer["systemMessage"]


def test_a_task_completed_in_an_earlier_turn_does_not_count(
    project: Path, transcript: Transcript
) -> None:
    _turn(transcript, 1_000, [("TaskUpdate", {"taskId": "1", "status": "completed"})])
    _turn(transcript, 1_200)
    assert run_hook(stop_payload(transcript, project)) is None


def test_subagent_lines_inline_do_not_count(project: Path, transcript: Transcript) -> None:
    transcript.prompt("go")
    transcript.assistant(
        context=150_000, tools=[("TaskUpdate", {"status": "completed"})], sidechain=True
    )
    transcript.assistant(context=1_000, text="done")
    assert run_hook(stop_payload(transcript, project)) is None


def test_off_says_nothing(
    project: Path, transcript: Transcript, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "off")
    _turn(transcript, WINDOW - 1, [("TaskUpdate", {"status": "completed"})])
    assert run_hook(stop_payload(transcript, project)) is None


def test_a_subagent_payload_is_ignored(project: Path, transcript: Transcript) -> None:
    _turn(transcript, AT)
    assert run_hook(stop_payload(transcript, project, agent_id="a1")) is None


def test_window_from_statusline_record_and_from_setting(
    project: Path, transcript: Transcript, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 130k is 65% of 200k, but 13% of the 1M window the statusline saw for this session.
    _turn(transcript, 130_000)
    _state.record_window(SESSION, transcript.model, 1_000_000)
    assert run_hook(stop_payload(transcript, project)) is None
    # A setting wins over the record.
    set_value("context_window", 200_000, scope="project", project_dir=project)
    answer = run_hook(stop_payload(transcript, project))
    assert answer is not None
    assert "200,000-token window" in answer["systemMessage"]


def test_a_1m_model_id_sets_the_window(project: Path, tmp_path: Path) -> None:
    t = Transcript(tmp_path / "t.jsonl", model="claude-sonnet-4-5[1m]")
    _turn(t, 130_000)
    assert run_hook(stop_payload(t, project)) is None
    _turn(t, 600_000)
    answer = run_hook(stop_payload(t, project))
    assert answer is not None
    assert "1,000,000-token window" in answer["systemMessage"]


def test_a_handoff_written_this_turn_ends_the_episode(
    project: Path, transcript: Transcript
) -> None:
    _turn(transcript, AT)
    assert run_hook(stop_payload(transcript, project)) is not None
    # The user ran /ctxrelay:handoff; Claude wrote the file it was given.
    path = project / ".ctxrelay" / "handoff" / "handoff-20260101T000000Z.md"
    path.parent.mkdir(parents=True)
    path.write_text("# Handoff\n## Next step\nrun the tests\n")
    _turn(transcript, AT + 100, [("Write", {"file_path": str(path), "content": "…"})])
    assert run_hook(stop_payload(transcript, project)) is None
    # A new episode: the hint may come once more.
    _turn(transcript, AT + 200)
    assert run_hook(stop_payload(transcript, project)) is not None


def _auto(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "auto")


def test_auto_asks_for_the_file_and_marks_it_ready(
    project: Path, transcript: Transcript, monkeypatch: pytest.MonkeyPatch
) -> None:
    _auto(monkeypatch)
    _turn(transcript, AT)
    answer = run_hook(stop_payload(transcript, project))
    assert answer is not None
    assert continued(answer) is not None
    job = _state.session_state(SESSION).get("handoff")
    assert job["phase"] == "writing"
    path = Path(job["path"])
    assert path.parent == project / ".ctxrelay" / "handoff"
    assert str(path) in str(continued(answer))
    for title in ("## Goal", "## State", "## Decisions", "## Files touched", "## Next step"):
        assert title in str(continued(answer))
    # Claude continues ("Stop hook feedback") and writes the file.
    transcript.context(str(continued(answer)))
    path.write_text("# Handoff\n## Next step\nrun make test\n")
    transcript.assistant(context=AT + 900, tools=[("Write", {"file_path": str(path)})])
    transcript.assistant(context=AT + 1_000, text=f"Handoff written to {path}")
    answer = run_hook(stop_payload(transcript, project, stop_hook_active=True))
    assert answer is not None
    assert "decision" not in answer
    assert "/clear" in answer["systemMessage"]
    assert _state.session_state(SESSION).get("handoff")["phase"] == "ready"


def test_auto_waits_then_retries_once_then_gives_up(
    project: Path, transcript: Transcript, monkeypatch: pytest.MonkeyPatch
) -> None:
    _auto(monkeypatch)
    _turn(transcript, AT)
    first = run_hook(stop_payload(transcript, project))
    assert first is not None
    assert continued(first) is not None
    answers = []
    for _ in range(HANDOFF_WAIT_TURNS * (HANDOFF_RETRY_MAX + 1)):
        _turn(transcript, AT + 10)
        answers.append(run_hook(stop_payload(transcript, project)))
    blocks = [continued(a) for a in answers if continued(a) is not None]
    assert len(blocks) == HANDOFF_RETRY_MAX
    assert "has not appeared yet" in str(blocks[0])
    assert continued(answers[HANDOFF_WAIT_TURNS - 1]) == blocks[0]  # after the full wait
    assert answers[-1] is not None
    assert "no handoff file appeared" in answers[-1]["systemMessage"]
    assert _state.session_state(SESSION).get("handoff")["phase"] == "failed"
    # After giving up it stays quiet for the rest of the episode.
    _turn(transcript, AT + 20)
    assert run_hook(stop_payload(transcript, project)) is None


def test_auto_file_appearing_while_waiting_is_found(
    project: Path, transcript: Transcript, monkeypatch: pytest.MonkeyPatch
) -> None:
    _auto(monkeypatch)
    _turn(transcript, AT)
    run_hook(stop_payload(transcript, project))
    _turn(transcript, AT + 10)
    assert run_hook(stop_payload(transcript, project)) is None  # waiting, turn 1
    path = Path(_state.session_state(SESSION).get("handoff")["path"])
    path.write_text("# Handoff\n")
    _turn(transcript, AT + 20)
    answer = run_hook(stop_payload(transcript, project))
    assert answer is not None
    assert str(path) in answer["systemMessage"]


def test_auto_task_done_starts_a_handoff_too(
    project: Path, transcript: Transcript, monkeypatch: pytest.MonkeyPatch
) -> None:
    _auto(monkeypatch)
    _turn(transcript, 5_000, [("TaskUpdate", {"taskId": "3", "status": "completed"})])
    answer = run_hook(stop_payload(transcript, project))
    assert answer is not None
    assert continued(answer) is not None
    assert "task was just marked completed" in str(continued(answer))


def test_concurrent_stops_hint_once(project: Path, transcript: Transcript) -> None:
    import multiprocessing

    _turn(transcript, AT)
    payload = json.dumps(stop_payload(transcript, project))
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        outputs = pool.map(_hook_in_process, [payload] * 4)
    assert sum(1 for o in outputs if o) == 1


def _hook_in_process(payload: str) -> str:
    import io

    from ctxrelay.claude import hook

    out = io.StringIO()
    hook.main(io.StringIO(payload), out)
    return out.getvalue()


@pytest.mark.parametrize(
    "payload",
    [
        {"hook_event_name": "Stop"},
        {"hook_event_name": "Stop", "session_id": SESSION, "transcript_path": 3},
        {"hook_event_name": "Stop", "session_id": SESSION, "transcript_path": "/nonexistent/x"},
        {"hook_event_name": "Stop", "session_id": "../../x", "transcript_path": "/dev/null"},
    ],
)
def test_bad_payloads_fail_open(project: Path, payload: dict[str, object]) -> None:
    assert run_hook(payload) is None


# -- stopped-short subagent notices at Stop ---------------------------------------------

KIND = "ctxrelay:investigator"


def _queued_stop(tmp_path: Path, agent_id: str = "a1") -> tuple[Session, Transcript]:
    """A subagent of the session that stopped at its turn limit, its notice queued by
    ``SubagentStop``; the main transcript to go on with."""
    session = Session(tmp_path / "cc", session_id=SESSION)
    session.start_agent(agent_id, KIND)
    for _ in range(AGENT_MAX_TURNS["investigator"]):
        session.respond(agent_id, 5_000)  # every response a tool call: no report
    stop = session.payload(
        "SubagentStop", agent_id, KIND, agent_transcript_path=str(session.agent_file(agent_id))
    )
    assert run_hook(stop) is None
    return session, Transcript(session.transcript)


def test_a_queued_notice_is_delivered_at_stop_once(project: Path, tmp_path: Path) -> None:
    session, transcript = _queued_stop(tmp_path)
    _turn(transcript, AT - 1)  # no handoff trigger: the notice is the whole answer
    answer = run_hook(stop_payload(transcript, project))
    assert answer is not None
    assert set(answer) == {"systemMessage"}  # to the user; Claude is not made to continue
    assert "Subagent a1 (ctxrelay:investigator) reached its turn limit" in answer["systemMessage"]
    assert str(session.agent_file("a1")) in answer["systemMessage"]
    assert run_hook(stop_payload(transcript, project)) is None
    prompt = session.payload("UserPromptSubmit", prompt="next")
    assert run_hook(prompt) is None  # delivered once, not again at the next prompt


def test_the_notice_joins_the_manual_hint(project: Path, tmp_path: Path) -> None:
    _, transcript = _queued_stop(tmp_path)
    _turn(transcript, AT)
    answer = run_hook(stop_payload(transcript, project))
    assert answer is not None
    assert "decision" not in answer
    hint, notice = answer["systemMessage"].split("\n")
    assert "/ctxrelay:handoff" in hint
    assert notice.startswith("[ctxrelay] Subagent a1")


def test_the_notice_rides_with_the_auto_write_prompt(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _auto(monkeypatch)
    session, transcript = _queued_stop(tmp_path)
    _turn(transcript, AT)
    answer = run_hook(stop_payload(transcript, project))
    assert answer is not None
    assert continued(answer) is not None
    # Claude is continuing to write the handoff: it reads the notice and can say so there.
    prompt, notice = str(continued(answer)).rsplit("\n\n", 1)
    assert "## Next step" in prompt
    assert notice.startswith("[ctxrelay] Subagent a1")
    assert str(session.agent_file("a1")) in notice
    assert "systemMessage" not in answer


def test_the_notice_comes_when_the_handover_is_off(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "off")
    _, transcript = _queued_stop(tmp_path)
    _turn(transcript, AT)
    answer = run_hook(stop_payload(transcript, project))
    assert answer is not None
    assert set(answer) == {"systemMessage"}
    assert "Subagent a1" in answer["systemMessage"]


def test_a_subagents_stop_leaves_the_notice_for_the_main_thread(
    project: Path, tmp_path: Path
) -> None:
    _, transcript = _queued_stop(tmp_path)
    _turn(transcript, AT - 1)
    assert run_hook(stop_payload(transcript, project, agent_id="a2")) is None
    answer = run_hook(stop_payload(transcript, project))
    assert answer is not None
    assert "Subagent a1" in answer["systemMessage"]


# -- a turn end reads the settings afresh each time -------------------------------------


def test_a_turn_end_sees_a_changed_window_setting(
    project: Path, transcript: Transcript, monkeypatch: pytest.MonkeyPatch
) -> None:
    _turn(transcript, 50_000)
    assert run_hook(stop_payload(transcript, project)) is None
    _turn(transcript, 51_000)
    assert run_hook(stop_payload(transcript, project)) is None
    # A smaller window in the project's config: 52,000 tokens is over 60% of 80,000.
    set_value("context_window", "80000", project_dir=project)
    _turn(transcript, 52_000)
    answer = run_hook(stop_payload(transcript, project))
    assert answer is not None
    assert "52,000 tokens, 65% of the 80,000-token window" in answer["systemMessage"]


def test_a_turn_end_sees_the_environment_and_the_recorded_window(
    project: Path, transcript: Transcript, monkeypatch: pytest.MonkeyPatch
) -> None:
    _turn(transcript, 50_000)
    assert run_hook(stop_payload(transcript, project)) is None
    monkeypatch.setenv("CTXRELAY_CONTEXT_WINDOW", "70000")
    _turn(transcript, 50_500)
    answer = run_hook(stop_payload(transcript, project))
    assert answer is not None
    assert "of the 70,000-token window" in answer["systemMessage"]
    monkeypatch.delenv("CTXRELAY_CONTEXT_WINDOW")
    _state.record_window(SESSION, None, 75_000)  # what the statusline saw
    _turn(transcript, 50_600)
    assert run_hook(stop_payload(transcript, project)) is None  # the context hint: once
    assert _state.session_state(SESSION).get("usable_limit") == usable_limit(75_000)


def test_a_turn_end_sees_a_completed_task_and_a_handoff_write(
    project: Path, transcript: Transcript
) -> None:
    _turn(transcript, 50_000)
    assert run_hook(stop_payload(transcript, project)) is None
    _turn(transcript, 50_100, [("TaskUpdate", {"taskId": "1", "status": "completed"})])
    answer = run_hook(stop_payload(transcript, project))
    assert answer is not None
    assert "task was just marked completed" in answer["systemMessage"]


@pytest.mark.parametrize("reply", ["Part one of the widget is done.", "Done.", "✓ 完成", '"Ok"'])
def test_a_reply_written_150_ms_after_the_stop_hook_starts_is_the_one_read(
    project: Path, transcript: Transcript, reply: str
) -> None:
    # Under load Claude Code can start Stop before it has written the turn's last
    # response; the hook waits for the reply the payload names, whatever it says.
    _turn(transcript, AT - 10_000)
    assert run_hook(stop_payload(transcript, project)) is None
    transcript.prompt("go on")
    late = threading.Timer(0.15, lambda: transcript.assistant(context=AT, text=reply))
    late.start()
    try:
        answer = run_hook(stop_payload(transcript, project, last_assistant_message=reply))
    finally:
        late.join()
    assert answer is not None
    assert f"{AT:,} tokens" in answer["systemMessage"]


def test_a_reply_flushed_late_under_load_is_still_read(
    project: Path, transcript: Transcript
) -> None:
    # Seen in the UI at load 15 on two cores: the reply was not on disk 0.85 s after its
    # timestamp, and the Stop hook, waiting half a second, missed the handoff point.
    _turn(transcript, AT - 10_000)
    assert run_hook(stop_payload(transcript, project)) is None
    transcript.prompt("go on")
    late = threading.Timer(1.5, lambda: transcript.assistant(context=AT, text="完成"))
    late.start()
    try:
        answer = run_hook(stop_payload(transcript, project, last_assistant_message="完成"))
    finally:
        late.join()
    assert answer is not None
    assert f"{AT:,} tokens" in answer["systemMessage"]


def test_a_reply_that_never_appears_costs_at_most_the_bound(
    project: Path, transcript: Transcript
) -> None:
    _turn(transcript, AT - 10_000)
    started = time.monotonic()
    payload = stop_payload(
        transcript, project, last_assistant_message="A reply that was never written down."
    )
    assert run_hook(payload) is None  # read as it is: below the point, nothing to say
    assert time.monotonic() - started < STOP_REPLY_WAIT_S + 5  # a generous ceiling
