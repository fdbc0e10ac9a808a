"""The missed trigger of issue 23 (a fresh auto session at 63% with no write prompt): a
Stop whose read of the transcript found no response decides nothing from it, so the next
Stop that can read the context decides on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.budget.bounds import CONTEXT_PERCENT
from ctxrelay.claude import _state
from ctxrelay.claude.config import set_value
from ctxrelay.transcripts import tail_context
from tests.claude._handoff import SESSION, Transcript, isolate, run_hook, stop_payload

WINDOW = 200_000
AT = WINDOW * CONTEXT_PERCENT // 100


@pytest.fixture
def project(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    root = isolate(monkeypatch, tmp_path)
    set_value("main_handover", "auto", scope="project", project_dir=root)
    return root


@pytest.fixture
def transcript(tmp_path: Path) -> Transcript:
    return Transcript(tmp_path / "home" / ".claude" / "projects" / "p" / f"{SESSION}.jsonl")


def _writing() -> bool:
    job = _state.session_state(SESSION).get("handoff")
    return isinstance(job, dict) and job.get("phase") == "writing"


def test_a_stop_that_reads_no_response_leaves_the_decision_to_the_next(
    project: Path, transcript: Transcript
) -> None:
    transcript.prompt("go on")  # the turn's reply is not on disk yet
    assert run_hook(stop_payload(transcript, project)) is None
    transcript.assistant(context=AT + 1_000, text="done")
    run_hook(stop_payload(transcript, project))
    assert _writing()  # the next Stop reads the context and hands off


def test_a_missing_transcript_decides_nothing(
    project: Path, transcript: Transcript, tmp_path: Path
) -> None:
    transcript.prompt("go on")
    transcript.assistant(context=1_000, text="done")
    assert run_hook(stop_payload(transcript, project)) is None
    gone = stop_payload(transcript, project, transcript_path=str(tmp_path / "gone.jsonl"))
    for _ in range(3):
        assert run_hook(gone) is None
        assert not _writing()
    transcript.assistant(context=AT + 1_000, text="done")
    run_hook(stop_payload(transcript, project))
    assert _writing()


def test_a_system_line_that_only_names_a_boundary_does_not_restart_the_reading(
    transcript: Transcript,
) -> None:
    transcript.prompt("go on")
    transcript.assistant(context=AT + 1_000, text="done")
    with transcript.path.open("a") as fh:
        line = {"type": "system", "subtype": "informational", "content": "no compact_boundary"}
        fh.write(json.dumps(line) + "\n")
    assert tail_context(str(transcript.path))[:2] == (AT + 1_000, "claude-sonnet-4-5")
    with transcript.path.open("a") as fh:
        fh.write(json.dumps({"type": "system", "subtype": "compact_boundary"}) + "\n")
    assert tail_context(str(transcript.path)) == (None, None, True)
