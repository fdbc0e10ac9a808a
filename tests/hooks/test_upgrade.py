"""State written by the previous release (``tests/hooks/data/previous-state``) is read in
place or moved once: the Claude Code host's documents stay where they were, a project's
records and Codex's documents move to their new folders the first time they are asked
for, and links that named no host are read as their host's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ctxrelay.claude import _state as claude_state
from ctxrelay.codex import _state as codex_state
from ctxrelay.codex.guard import reads_path
from ctxrelay.hooks import chain, handoff, state
from tests.conftest import PROJECT

DATA = PROJECT / "tests" / "hooks" / "data" / "previous-state"
OLD_KEY = "6728b3ee795f155f10215a6b"
"""The previous release's key of the fixture's project (``@ROOT@/project``)."""
H1, H2, H3 = (
    "handoff-20260528T202640Z.md",
    "handoff-20260528T202820Z.md",
    "handoff-20260528T203000Z.md",
)


@pytest.fixture
def old(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The previous release's state folder, laid out under ``tmp_path`` as it wrote it;
    returns the project."""
    root = tmp_path / "state"
    for src in sorted(DATA.rglob("*.json")):
        dest = root / src.relative_to(DATA)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(src.read_text().replace("@ROOT@", str(tmp_path)))
    project = tmp_path / "project"
    folder = handoff.handoff_dir(project)
    folder.mkdir(parents=True)
    for name in (H1, H2, H3):
        (folder / name).write_text(f"# Handoff\n## Next step\n{name}\n")
    projects = root / "ctxrelay" / "claude" / "projects"
    (projects / f"{OLD_KEY}.json").rename(projects / f"{state.project_key(project)}.json")
    monkeypatch.delenv("CTXRELAY_STATE_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(root))
    return project


def test_the_claude_code_hosts_documents_are_read_in_place(old: Path) -> None:
    job = claude_state.session_state("c-fresh").get("handoff")
    assert job["phase"] == "writing"
    assert job["path"].endswith(H2)
    assert claude_state.recorded_window("other", "claude-sonnet-4-5") == 200_000


def test_a_projects_records_move_once_and_keep_the_chain(old: Path, tmp_path: Path) -> None:
    legacy = tmp_path / "state" / "ctxrelay" / "claude" / "projects"
    assert handoff.consumed(old, H1)
    assert not legacy.joinpath(f"{state.project_key(old)}.json").exists()
    fresh = chain.ChainLink("claude", "c-fresh", str(tmp_path / "claude-projects/c-fresh.jsonl"))
    assert chain.chain(old, "c-fresh") == [
        chain.ChainLink("claude", "c-writer", str(tmp_path / "claude-projects/c-writer.jsonl")),
        fresh,
    ]
    writer = chain.written_by(old, H3)
    assert writer is not None
    assert writer.host == "codex"  # a rollout: Codex's, though the link named no host
    assert handoff.reserved_by(old, H2) == fresh
    # A name the previous release reserved is never handed out again.
    assert handoff.new_handoff_path(old, now=1_780_000_100.0).name != H2


def test_a_codex_threads_documents_move_to_the_codex_folder(old: Path, tmp_path: Path) -> None:
    doc = codex_state.session_state("x-thread")
    assert doc.get("asked") is True
    assert doc.path == Path(tmp_path / "state/ctxrelay/codex/sessions/x-thread.json")
    record = reads_path({"session_id": "x-thread", "cwd": str(old)})
    assert record == str(tmp_path / "state/ctxrelay/codex/reads/x-thread/main.json")
    assert Path(record).is_file()
    assert not (tmp_path / "state/ctxrelay/claude/codex-reads").joinpath("x-thread").exists()


def test_a_move_that_another_hook_won_is_not_an_error(old: Path, tmp_path: Path) -> None:
    legacy = tmp_path / "state/ctxrelay/claude/codex-sessions/x-thread.json"
    new = Path(state.session_doc_path("codex", "x-thread"))
    new.parent.mkdir(parents=True)
    shutil.copy(legacy, new)
    legacy.write_text('{"asked": false}')  # the copy left behind is never read over the new
    assert codex_state.session_state("x-thread").get("asked") is True
