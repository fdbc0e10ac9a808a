"""SessionStart: after /clear the fresh session resumes from the newest unconsumed handoff."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxrelay.claude import handoff
from tests.claude._handoff import isolate, run_hook


@pytest.fixture
def project(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return isolate(monkeypatch, tmp_path)


def _start(project: Path, source: str = "clear") -> dict[str, object] | None:
    return run_hook(
        {
            "session_id": "fresh-1",
            "transcript_path": str(project / "t.jsonl"),
            "cwd": str(project),
            "hook_event_name": "SessionStart",
            "source": source,
        }
    )


def _write(project: Path, body: str) -> Path:
    path = handoff.new_handoff_path(project)
    path.write_text(body)
    return path


def test_clear_injects_the_latest_handoff_once(project: Path) -> None:
    _write(project, "# Handoff\n## Next step\nOLDER-STEP\n")
    newest = _write(project, "# Handoff\n## Goal\nship v2\n## Next step\nrun make test\n")
    answer = _start(project)
    assert answer is not None
    out = answer["hookSpecificOutput"]
    assert isinstance(out, dict)
    assert out["hookEventName"] == "SessionStart"
    context = out["additionalContext"]
    assert str(newest) in context
    assert "ship v2" in context
    assert "run make test" in context
    assert "OLDER-STEP" not in context
    # Consumed: a second /clear starts clean.
    assert _start(project) is None


def test_other_sources_and_off_inject_nothing(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(project, "# Handoff\n")
    for source in ("startup", "resume", "compact"):
        assert _start(project, source) is None
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "off")
    assert _start(project) is None
    monkeypatch.delenv("CTXRELAY_MAIN_HANDOVER")
    assert _start(project) is not None


def test_a_long_handoff_is_cut_and_says_where_the_rest_is(project: Path) -> None:
    path = _write(project, "# Handoff\n" + "x" * (handoff.INJECT_MAX_BYTES + 100))
    answer = _start(project)
    assert answer is not None
    context = answer["hookSpecificOutput"]["additionalContext"]  # type: ignore[index]
    assert f"the rest is in {path}" in context
    assert len(context) < handoff.INJECT_MAX_BYTES + 2_000


def test_nothing_to_resume(project: Path) -> None:
    assert _start(project) is None
    _write(project, "")  # reserved and created empty: not a handoff yet
    assert _start(project) is None


def test_every_start_seeds_the_usable_limit_cache(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxrelay.claude import _state
    from ctxrelay.claude._limit import usable_limit

    assert _start(project, "startup") is None
    doc = _state.session_state("fresh-1").read()
    assert doc["usable_limit"] == usable_limit(200_000)
    assert doc["mode"] == "manual"
    monkeypatch.setenv("CTXRELAY_CONTEXT_WINDOW", "1000000")
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "off")
    assert _start(project, "resume") is None
    doc = _state.session_state("fresh-1").read()
    assert doc["usable_limit"] == usable_limit(1_000_000)
    assert doc["mode"] == "off"


def _started(project: Path, session_id: str) -> dict[str, object]:
    from ctxrelay.claude import _state

    payload = {
        "session_id": session_id,
        "transcript_path": str(project / "t.jsonl"),
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    assert run_hook(payload) is None
    return _state.session_state(session_id).read()


def test_a_start_seeded_from_the_last_one_sees_a_changed_setting(project: Path) -> None:
    from ctxrelay.claude._limit import usable_limit
    from ctxrelay.claude.config import set_value

    first = _started(project, "11111111-aaaa-4bbb-8ccc-000000000001")
    assert first["usable_limit"] == usable_limit(200_000)
    assert _started(project, "11111111-aaaa-4bbb-8ccc-000000000002") == first  # seeded
    set_value("context_window", "1000000", project_dir=project)
    third = _started(project, "11111111-aaaa-4bbb-8ccc-000000000003")
    assert third["usable_limit"] == usable_limit(1_000_000)
    set_value("main_handover", "off", project_dir=project)
    assert _started(project, "11111111-aaaa-4bbb-8ccc-000000000004")["mode"] == "off"
