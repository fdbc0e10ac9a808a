"""The slider in Claude Code's main session: the Stop hook's hint and auto handoff, the
statusline's countdown and the usable-limit deny all follow ``ctxrelay claude config
--threshold`` (the policy core's target), and Off keeps only the deny."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from ctxrelay.budget.bounds import DEFAULT_THRESHOLD, MAIN_OUTPUT_RESERVE
from ctxrelay.claude import _state
from ctxrelay.claude._limit import deny_reason
from ctxrelay.claude.config import load, set_value
from ctxrelay.claude.extras.statusline import status_line
from ctxrelay.cli.claude import main as claude_main
from ctxrelay.errors import ConfigError
from tests.claude._handoff import (
    SESSION,
    Transcript,
    continued,
    isolate,
    run_hook,
    stop_payload,
)

if TYPE_CHECKING:
    from ctxrelay.claude._events._payloads import PreToolUsePayload

WINDOW = 200_000  # claude-sonnet-4-5's
AT_45 = 90_000
AT_40 = 80_000
LIMIT = WINDOW - MAIN_OUTPUT_RESERVE
ANSI_RESET = "\x1b[0m"


@pytest.fixture
def project(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return isolate(monkeypatch, tmp_path)


def _transcript(tmp_path: Path, context: int, name: str = SESSION) -> Transcript:
    t = Transcript(tmp_path / "home" / ".claude" / "projects" / "p" / f"{name}.jsonl")
    t.prompt("go on")
    t.assistant(context=context, text="done")
    return t


def _hint(answer: dict[str, Any] | None) -> str | None:
    return None if answer is None else cast("str | None", answer.get("systemMessage"))


def _hook_process(payload: dict[str, Any]) -> dict[str, Any] | None:
    """The hook as Claude Code starts it: a fresh process, the payload on stdin."""
    done = subprocess.run(
        [sys.executable, "-m", "ctxrelay.claude.hook"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ),
        timeout=60,
    )
    assert done.stderr == "", done.stderr  # a hook that failed open proves nothing
    return cast("dict[str, Any]", json.loads(done.stdout)) if done.stdout.strip() else None


def test_a_config_at_45_hints_at_45_and_not_at_40(project: Path, tmp_path: Path) -> None:
    set_value("threshold", "45", project_dir=project)
    below = _transcript(tmp_path, AT_40)
    assert run_hook(stop_payload(below, project)) is None
    below.prompt("more")
    below.assistant(context=AT_45 - 1, text="done")
    assert run_hook(stop_payload(below, project)) is None
    below.prompt("more")
    below.assistant(context=AT_45, text="done")
    hint = _hint(run_hook(stop_payload(below, project)))
    assert hint is not None
    assert f"{AT_45:,} tokens, 45% of the {WINDOW:,}-token window" in hint
    assert "(the handoff point is 45%)" in hint


def test_the_hook_process_reads_the_slider_too(project: Path, tmp_path: Path) -> None:
    set_value("threshold", "45", project_dir=project)
    t = _transcript(tmp_path, AT_40)
    assert _hook_process(stop_payload(t, project)) is None
    t.prompt("more")
    t.assistant(context=AT_45, text="done")
    hint = _hint(_hook_process(stop_payload(t, project)))
    assert hint is not None
    assert "(the handoff point is 45%)" in hint


def test_a_decimal_slider_and_the_floor(project: Path, tmp_path: Path) -> None:
    set_value("threshold", "62.5", project_dir=project)
    t = _transcript(tmp_path, 124_999)
    assert run_hook(stop_payload(t, project)) is None
    t.prompt("more")
    t.assistant(context=125_000, text="done")
    hint = _hint(run_hook(stop_payload(t, project)))
    assert hint is not None
    assert "(the handoff point is 62.5%)" in hint

    set_value("threshold", "4", project_dir=project)  # below the floor: applied as 10%
    other = _transcript(tmp_path, 19_999, name="5f0c7a2e-1111-4222-8333-944455550000")
    payload = {**stop_payload(other, project), "session_id": other.path.stem}
    assert run_hook(payload) is None
    other.prompt("more")
    other.assistant(context=20_000, text="done")
    hint = _hint(run_hook(payload))
    assert hint is not None
    assert "(the handoff point is 10%)" in hint


def test_a_changed_slider_applies_at_the_next_stop(project: Path, tmp_path: Path) -> None:
    t = _transcript(tmp_path, AT_45)
    assert run_hook(stop_payload(t, project)) is None  # at the default 60: nothing yet
    set_value("threshold", 45, project_dir=project)
    t.prompt("more")
    t.assistant(context=AT_45 + 10, text="done")
    assert _hint(run_hook(stop_payload(t, project))) is not None


def test_auto_mode_starts_the_handoff_at_the_slider(project: Path, tmp_path: Path) -> None:
    set_value("main_handover", "auto", project_dir=project)
    set_value("threshold", 45, project_dir=project)
    t = _transcript(tmp_path, AT_40)
    assert run_hook(stop_payload(t, project)) is None
    t.prompt("more")
    t.assistant(context=AT_45, text="done")
    answer = run_hook(stop_payload(t, project))
    assert answer is not None
    assert continued(answer) is not None
    assert "(the handoff point is 45%)" in str(continued(answer))


def test_the_env_override_wins(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_value("threshold", 45, project_dir=project)
    monkeypatch.setenv("CTXRELAY_THRESHOLD", "70")
    cfg = load(project)
    assert (cfg.threshold, cfg.threshold_source) == (70, "env")
    t = _transcript(tmp_path, AT_45)
    assert run_hook(stop_payload(t, project)) is None
    t.prompt("more")
    t.assistant(context=140_000, text="done")
    hint = _hint(_hook_process(stop_payload(t, project)))
    assert hint is not None
    assert "(the handoff point is 70%)" in hint
    # A bad override is named and ignored: the file's slider applies.
    monkeypatch.setenv("CTXRELAY_THRESHOLD", "lots")
    cfg = load(project)
    assert (cfg.threshold, cfg.threshold_source) == (45, "project")
    assert any("threshold from env" in p for p in cfg.problems)


def test_off_hints_nothing_and_keeps_the_usable_limit_deny(project: Path, tmp_path: Path) -> None:
    set_value("threshold", "off", project_dir=project)
    t = _transcript(tmp_path, LIMIT - 1_000)
    t.prompt("more")
    t.assistant(
        context=LIMIT - 500,
        tools=[("TaskUpdate", {"taskId": "1", "status": "completed"})],
    )
    t.assistant(context=LIMIT - 400, text="done")
    assert run_hook(stop_payload(t, project)) is None  # no context hint, no task hint
    # The cache the deny's fast path reads keeps the mode: Off is not mode off.
    assert _state.session_state(SESSION).read()["mode"] == "manual"
    t.prompt("more")
    t.assistant(context=LIMIT, tools=[("Bash", {"command": "ls"})])
    payload: PreToolUsePayload = {
        "session_id": SESSION,
        "transcript_path": str(t.path),
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    }
    reason = deny_reason(payload)
    assert reason is not None
    assert f"usable limit of {LIMIT:,}" in reason
    answer = _hook_process(cast("dict[str, Any]", payload))
    assert answer is not None
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"


def _statusline(project: Path, context: int) -> str:
    payload = {
        "session_id": SESSION,
        "model": {"id": "claude-sonnet-4-5"},
        "workspace": {"project_dir": str(project)},
        "context_window": {
            "context_window_size": WINDOW,
            "current_usage": {"input_tokens": context},
        },
    }
    line = status_line(payload)
    return line[line.index("m") + 1 : -len(ANSI_RESET)]  # the colour codes off


def test_the_statusline_counts_down_to_45(project: Path) -> None:
    assert _statusline(project, 50_000).endswith(f"handoff in 70k ({DEFAULT_THRESHOLD}%)")
    set_value("threshold", 45, project_dir=project)
    assert _statusline(project, 50_000).endswith("handoff in 40k (45%)")
    assert _statusline(project, AT_45 - 1).endswith("handoff in 1 (45%)")
    assert "handoff due (45% reached, +2k)" in _statusline(project, AT_45 + 2_000)
    set_value("threshold", 100, project_dir=project)
    assert _statusline(project, 50_000).endswith(
        f"slider off · limit in {(LIMIT - 50_000) // 1000}k"
    )


def _cli(*argv: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert claude_main(["config", *argv]) == 0
    return out.getvalue()


def test_claude_config_sets_and_shows_the_slider(project: Path) -> None:
    shown = _cli("--project-dir", str(project))
    assert f"threshold  {DEFAULT_THRESHOLD}% of the window (default)" in shown
    shown = _cli("--project-dir", str(project), "--threshold", "45")
    assert "threshold  45% of the window (project)" in shown
    assert json.loads((project / ".ctxrelay" / "config.json").read_text()) == {
        "claude": {"threshold": 45}
    }
    doc = json.loads(_cli("--project-dir", str(project), "--user", "--threshold", "7.5", "--json"))
    assert (doc["threshold"], doc["threshold_source"]) == (45, "project")  # project wins
    assert doc["effective_threshold"] == 45
    _cli("--project-dir", str(project), "--threshold", "default")
    doc = json.loads(_cli("--project-dir", str(project), "--json"))
    assert (doc["threshold"], doc["threshold_source"], doc["effective_threshold"]) == (
        7.5,
        "user",
        10,
    )
    assert "applied as 10%, the floor" in _cli("--project-dir", str(project))


@pytest.mark.parametrize("bad", ["101", "-1", "sixty", "nan"])
def test_a_bad_slider_is_refused_with_a_sentence(project: Path, bad: str) -> None:
    with pytest.raises(ConfigError, match="percentage from 0 to 100"):
        set_value("threshold", bad, project_dir=project)
    assert not (project / ".ctxrelay" / "config.json").exists()


def test_doctor_names_the_handoff_point(project: Path, tmp_path: Path) -> None:
    from ctxrelay.claude.setup.doctor import doctor

    set_value("threshold", "45", project_dir=project)
    report = doctor(project, tmp_path / "home", runs=1)
    assert report.slider == (
        "the main session's handoff point is 45% of the window (set in the project config)"
    )
    assert report.as_json()["threshold"] == 45
