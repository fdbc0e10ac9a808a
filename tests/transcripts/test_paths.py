"""Finding a subagent's file from a hook payload, never outside the transcript's directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxrelay.transcripts import subagent_transcript
from tests.conftest import corpus_path


def _layout(tmp_path: Path) -> Path:
    main = tmp_path / "proj" / "sess.jsonl"
    agents = tmp_path / "proj" / "sess" / "subagents"
    agents.mkdir(parents=True)
    main.write_text("")
    (agents / "agent-a1.jsonl").write_text("")
    (agents / "agent-acompact-ff.jsonl").write_text("")
    return main


def test_real_capture_layout() -> None:
    projects = corpus_path("corpora/claude-code-capture/projects")
    main = projects / "505a7478-0c09-4225-8c2e-eb227889cf62.jsonl"
    found = subagent_transcript(main, main.stem, "a0ccb5802f157f5c2")
    assert found == str(projects / main.stem / "subagents" / "agent-a0ccb5802f157f5c2.jsonl")


def test_found_and_missing(tmp_path: Path) -> None:
    main = _layout(tmp_path)
    assert subagent_transcript(main, "sess", "a1") == str(
        tmp_path / "proj" / "sess" / "subagents" / "agent-a1.jsonl"
    )
    assert subagent_transcript(main, "sess", "a2") is None
    assert subagent_transcript(main, "sess", "a2", must_exist=False) is not None


@pytest.mark.parametrize(
    ("session_id", "agent_id"),
    [
        ("..", "a1"),
        ("sess", "../../etc/passwd"),
        ("sess/../sess", "a1"),
        ("sess", "a1/../a1"),
        ("/abs", "a1"),
        ("sess", ""),
        ("sess", "acompact-ff"),
        (None, "a1"),
        ("sess", 12),
        ("sess", "a1\x00"),
        ("sess", "-rf"),
    ],
)
def test_untrusted_ids_are_refused(tmp_path: Path, session_id: object, agent_id: object) -> None:
    main = _layout(tmp_path)
    assert subagent_transcript(main, session_id, agent_id) is None


def test_symlink_out_of_the_directory_is_refused(tmp_path: Path) -> None:
    main = _layout(tmp_path)
    outside = tmp_path / "outside" / "subagents"
    outside.mkdir(parents=True)
    (outside / "agent-x.jsonl").write_text("")
    os.symlink(tmp_path / "outside", tmp_path / "proj" / "evil")
    assert subagent_transcript(main, "evil", "x") is None
