"""The Codex main session's handoff through the hook Codex runs, on rollouts shaped like
Codex's: ``Stop`` asks once at the slider and not before; a fresh session's
``SessionStart`` is pointed at the file, once; the slider is ``ctxrelay codex config``'s
and the window the model table's (or ``model_context_window`` of ``config.toml``)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget.triggers import context_window_for, main_budget
from ctxrelay.codex import hook
from ctxrelay.codex.config import set_threshold
from tests.transcripts._codex_lines import THREAD, Rollout

WINDOW = context_window_for("gpt-5.5")
TARGET = main_budget(WINDOW).handoff_target or 0


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    monkeypatch.delenv("CTXRELAY_CODEX_THRESHOLD", raising=False)
    root = tmp_path / "repo"
    root.mkdir()
    return root


def rollout(project: Path, tokens: int) -> Path:
    path = project.parent / "rollout.jsonl"
    return Rollout(cwd=str(project)).turn("gpt-5.5").response("resp_1", tokens - 40).write(path)


def answer(payload: dict[str, Any]) -> dict[str, Any] | None:
    out = io.StringIO()
    assert hook.main(io.StringIO(json.dumps(payload)), out) == 0
    return json.loads(out.getvalue()) if out.getvalue() else None


def stop(project: Path, transcript: Path, *, active: bool = False) -> dict[str, Any] | None:
    return answer(
        {
            "hook_event_name": "Stop",
            "session_id": THREAD,
            "turn_id": "turn-1",
            "transcript_path": str(transcript),
            "cwd": str(project),
            "model": "gpt-5.5",
            "stop_hook_active": active,
            "last_assistant_message": "ok",
        }
    )


def start(project: Path, source: str, session: str = "01a2331b-0000-7000-8000-000000000002") -> Any:
    return answer(
        {
            "hook_event_name": "SessionStart",
            "session_id": session,
            "transcript_path": str(project.parent / "next.jsonl"),
            "cwd": str(project),
            "model": "gpt-5.5",
            "source": source,
        }
    )


def test_stop_asks_for_a_handoff_at_the_slider_once_and_not_before(project: Path) -> None:
    assert stop(project, rollout(project, TARGET - 1)) is None
    transcript = rollout(project, TARGET)
    asked = stop(project, transcript)
    assert asked is not None
    assert asked["decision"] == "block"
    reason = asked["reason"]
    assert reason.startswith("[ctxrelay] Hand off now: the context is ")
    assert f"{WINDOW:,}-token window" in reason
    written = Path(reason.split("exactly this path:\n\n    ", 1)[1].split("\n", 1)[0])
    assert written.parent == project / ".ctxrelay" / "handoff"
    # Codex continues the turn with stop_hook_active: never blocked again, nor later.
    assert stop(project, transcript, active=True) is None
    assert stop(project, rollout(project, TARGET + 5_000)) is None


def test_the_slider_and_the_configured_window_move_the_point(project: Path) -> None:
    set_threshold("30", "project", project)
    low = main_budget(WINDOW, 30).handoff_target or 0
    assert low < TARGET
    assert stop(project, rollout(project, low)) is not None


def test_a_window_set_in_config_toml_is_the_window(project: Path) -> None:
    home = Path(os.environ["CODEX_HOME"])
    home.mkdir()
    (home / "config.toml").write_text("model_context_window = 100000\n")
    target = main_budget(100_000).handoff_target or 0
    assert target < TARGET
    assert stop(project, rollout(project, target)) is not None


def test_a_fresh_session_is_pointed_at_the_file_once(project: Path) -> None:
    asked = stop(project, rollout(project, TARGET))
    assert asked is not None
    path = Path(asked["reason"].split("exactly this path:\n\n    ", 1)[1].split("\n", 1)[0])
    path.write_text("# Handoff\n\n## Goal\nship it\n\n## Next step\nRun the tests.\n")
    assert start(project, "resume") is None  # a resumed thread keeps its context
    note = start(project, "clear")
    assert note is not None
    context = note["hookSpecificOutput"]["additionalContext"]
    assert note["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert str(path) in context
    assert "Run the tests." in context
    assert len(context) < 2_500  # far under Codex's spill of 2,500 tokens: never cut
    assert start(project, "startup", "01a2331c-0000-7000-8000-000000000003") is None


_PROBE = """
import io, sys
before = set(sys.modules)
from ctxrelay.codex import hook
out = io.StringIO()
hook.main(io.StringIO(sys.argv[1]), out)
sys.stdout.write(out.getvalue() + "\\n" + "\\n".join(sorted(set(sys.modules) - before)))
"""


def test_the_stop_hook_loads_no_process_or_server_machinery(project: Path, tmp_path: Path) -> None:
    transcript = rollout(project, TARGET)
    payload = {
        "hook_event_name": "Stop",
        "session_id": THREAD,
        "transcript_path": str(transcript),
        "cwd": str(project),
        "stop_hook_active": False,
    }
    env = {"CTXRELAY_STATE_DIR": str(tmp_path / "s2"), "PATH": os.defpath, "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(payload)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert done.stderr == ""
    first, _, modules = done.stdout.partition("\n")
    assert '"decision": "block"' in first
    loaded = set(modules.splitlines())
    for heavy in ("subprocess", "threading", "ctxrelay.codex.appserver", "ctxrelay.cli", "rich"):
        assert heavy not in loaded
