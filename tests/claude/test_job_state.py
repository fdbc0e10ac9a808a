"""The Claude Code hooks read a session document as the previous version wrote it, bare
phase strings and all, and carry its handoff job on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.budget.bounds import CONTEXT_PERCENT
from ctxrelay.claude import _state, handoff
from ctxrelay.claude._events.stop import ready_text
from ctxrelay.claude.extras.statusline import status_line
from ctxrelay.hooks.job import HandoffPhase
from tests.claude._handoff import SESSION, Transcript, isolate, run_hook, stop_payload

AT = 200_000 * CONTEXT_PERCENT // 100


@pytest.fixture
def project(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    found = isolate(monkeypatch, tmp_path)
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "auto")
    return found


def _previous_document(path: Path) -> dict[str, object]:
    """A session's document as the previous version's Stop hook left it one turn after
    asking for the file: the job a dict of bare strings, the once group, the stamp."""
    return {
        "usable_limit": 167_000,
        "mode": "auto",
        "limit_env": "auto||",
        "once": ["auto:context"],
        "handoff": {
            "phase": "writing",
            "path": str(path),
            "reason": "the context is 120,100 tokens, 60% of the 200,000-token window",
            "waited": 1,
            "retries": 0,
            "triggers": ["context"],
        },
    }


def test_a_job_the_previous_version_wrote_goes_on_to_ready(project: Path, tmp_path: Path) -> None:
    path = handoff.new_handoff_path(project)
    stored = _previous_document(path)
    doc = _state.session_state(SESSION)
    doc.path.parent.mkdir(parents=True, exist_ok=True)
    doc.path.write_text(json.dumps(stored))
    transcript = Transcript(tmp_path / "t" / f"{SESSION}.jsonl")
    transcript.prompt("go on")
    transcript.assistant(context=AT + 10, text="still working")

    # The statusline reads the stored phase.
    line = status_line({"session_id": SESSION, "workspace": {"project_dir": str(project)}})
    assert "writing the file" in line

    # The file appears: the job the previous version started is ready, its fields kept.
    path.write_text("# Handoff\n## Next step\nrun it\n")
    answer = run_hook(stop_payload(transcript, project))
    assert answer is not None
    assert ready_text(path) in answer["systemMessage"]
    job = _state.session_state(SESSION).get("handoff")
    assert job == {**stored["handoff"], "phase": "ready", "automod": "absent"}  # type: ignore[dict-item]
    assert isinstance(job["phase"], str)
    assert job["phase"] == HandoffPhase.READY
    assert "once" not in _state.session_state(SESSION).read()  # the episode ended
