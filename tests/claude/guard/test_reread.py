"""The re-read guard, through the real hook entry: a Read of lines the same agent
already read in its current context, unchanged since, is denied (``offset: 1`` and a
large ``limit`` included); a changed file, other lines, another agent, and any Read after
a compaction or in a new session pass."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.claude.guard import _reread
from ctxrelay.hooks.guard.reads import READS_KEPT
from tests.claude._session import SESSION_ID, Session, run_hook

AGENT = "a1b2c3d4e5f60718"


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Session:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var in ("CTXRELAY_MAIN_HANDOVER", "CTXRELAY_CONTEXT_WINDOW", "CLAUDE_PROJECT_DIR"):
        monkeypatch.delenv(var, raising=False)
    return Session(tmp_path)


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("".join(f"line {i}\n" for i in range(50)))
    return path


def _transcript(session: Session, agent: str | None) -> Path:
    if agent is None:
        return session.transcript
    path = session.agent_file(agent)
    if not path.exists():
        session.start_agent(agent, "general-purpose")
    return path


def _read(session: Session, path: Path, agent: str | None = None, **extra: Any) -> str | None:
    """One Read as Claude Code runs it: PreToolUse, and when allowed, the result in the
    acting agent's transcript (as 2.1.x writes it). The deny reason, or None."""
    tool_input = {"file_path": str(path), **extra}
    payload = session.payload(
        "PreToolUse",
        agent,
        None if agent is None else "general-purpose",
        tool_name="Read",
        tool_input=tool_input,
        tool_use_id="toolu_r",
    )
    answer = run_hook(payload)
    if answer is not None:
        return str(answer["hookSpecificOutput"]["permissionDecisionReason"])
    text = path.read_text()
    result = {
        "type": "user",
        "message": {
            "role": "user",
            "content": [{"tool_use_id": "toolu_r", "type": "tool_result", "content": text}],
        },
        "toolUseResult": {
            "type": "text",
            "file": {
                "filePath": str(path),
                "content": text,
                "numLines": text.count("\n"),
                "startLine": 1,
                "totalLines": text.count("\n"),
            },
        },
    }
    with _transcript(session, agent).open("a") as handle:
        handle.write(json.dumps(result, separators=(",", ":")) + "\n")
    return None


def test_a_second_full_read_of_an_unchanged_file_is_denied(session: Session, notes: Path) -> None:
    assert _read(session, notes) is None
    reason = _read(session, notes)
    assert reason is not None
    assert f"you already read {notes} in full at " in reason
    assert "UTC (less than a minute ago)" in reason
    assert "has not changed since" in reason
    assert "Grep" in reason


@pytest.mark.parametrize(
    "bounds",
    [{"offset": 1}, {"limit": 1_000_000}, {"offset": 1, "limit": 200}, {"offset": 10}],
)
def test_offset_one_or_a_large_limit_is_no_way_around(
    session: Session, notes: Path, bounds: dict[str, Any]
) -> None:
    assert _read(session, notes) is None
    reason = _read(session, notes, None, **bounds)
    assert reason is not None
    assert f"you already read {notes} in full at " in reason


def test_other_lines_are_no_re_read(session: Session, notes: Path) -> None:
    assert _read(session, notes, offset=1, limit=10) is None
    assert _read(session, notes, offset=11, limit=10) is None  # different lines
    reason = _read(session, notes, offset=3, limit=5)  # within the first read
    assert reason is not None
    assert f"you already read {notes} lines 1 to 10 at " in reason
    assert _read(session, notes) is None  # the whole file: more than was read
    assert _read(session, notes, offset=30) is not None


def test_a_changed_file_is_read_again(session: Session, notes: Path) -> None:
    assert _read(session, notes) is None
    with notes.open("a") as handle:
        handle.write("one more\n")
    assert _read(session, notes) is None
    assert _read(session, notes) is not None  # and that read counts in turn


def test_a_touched_file_of_the_same_size_is_read_again(session: Session, notes: Path) -> None:
    assert _read(session, notes) is None
    st = notes.stat()
    os.utime(notes, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert _read(session, notes) is None


def test_a_ranged_read_is_no_full_read(session: Session, notes: Path) -> None:
    assert _read(session, notes, offset=1, limit=10) is None
    assert _read(session, notes) is None  # the first full read
    assert _read(session, notes, limit=5) is not None  # within it


def test_a_read_after_a_compaction_passes(session: Session, notes: Path) -> None:
    assert _read(session, notes) is None
    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "content": "Conversation compacted",
    }
    with session.transcript.open("a") as handle:
        handle.write(json.dumps(boundary, separators=(",", ":")) + "\n")
    assert _read(session, notes) is None
    assert _read(session, notes) is not None  # read in the compacted context


def test_a_new_session_after_clear_or_a_handoff_reads_again(
    session: Session, notes: Path, tmp_path: Path
) -> None:
    assert _read(session, notes) is None
    fresh = Session(tmp_path / "fresh", session_id="0b7a4a5e-1111-4222-8333-944455556666")
    assert _read(fresh, notes) is None


def test_agents_have_their_own_reads(session: Session, notes: Path) -> None:
    assert _read(session, notes, agent=AGENT) is None
    assert _read(session, notes) is None  # the main thread never read it
    assert _read(session, notes, agent=AGENT) is not None
    assert _read(session, notes) is not None
    assert _read(session, notes, agent="b2c3d4e5f6071829") is None


def test_a_read_that_never_completed_does_not_count(session: Session, notes: Path) -> None:
    payload = session.payload("PreToolUse", tool_name="Read", tool_input={"file_path": str(notes)})
    assert run_hook(payload) is None  # allowed, then refused by the user: no result
    assert _read(session, notes) is None


def test_the_record_is_bounded(session: Session, tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    paths = []
    for i in range(READS_KEPT + 10):
        path = folder / f"f{i}.txt"
        path.write_text(f"{i}\n")
        paths.append(path)
        assert _read(session, path) is None
    record = json.loads(Path(_reread.record_path(SESSION_ID, "main")).read_text())
    assert len(record["files"]) == READS_KEPT
    assert _read(session, paths[0]) is None  # forgotten: read again
    assert _read(session, paths[-1]) is not None


def test_a_broken_record_fails_open(session: Session, notes: Path) -> None:
    assert _read(session, notes) is None
    Path(_reread.record_path(SESSION_ID, "main")).write_text("{not json")
    assert _read(session, notes) is None


def test_the_docs_show_the_reason_as_produced() -> None:
    import calendar

    guide = (Path(__file__).resolve().parents[3] / "docs" / "guard.md").read_text()
    at = calendar.timegm((2026, 12, 1, 8, 15, 4, 0, 0, 0))
    shown = _reread.reason("/p/src/app.py", (1, -1), at, at + 450)
    assert f"```text\n{shown}\n```" in guide
    assert re.search(rf"newest\s+{READS_KEPT}\s+spans", guide)


def test_the_prompt_surface_shows_the_text_as_produced() -> None:
    import calendar

    surface = (Path(__file__).resolve().parents[3] / "docs" / "claude-code.md").read_text()
    at = calendar.timegm((2026, 12, 1, 8, 15, 4, 0, 0, 0))
    shown = _reread.reason("/p/src/app.py", (1, -1), at, at + 450)
    assert f"```text\n{shown}\n```" in surface
