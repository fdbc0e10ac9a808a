"""``ctxrelay claude statusline``: share, bar, countdown; records the window; never fails."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxrelay.budget.bounds import CONTEXT_PERCENT
from ctxrelay.claude import _state
from ctxrelay.claude.extras.statusline import BAR_WIDTH, render
from ctxrelay.cli.claude.statusline import main
from tests.claude._handoff import isolate

# Two statusline payloads Claude Code 2.1.332 sent (interactive, scripted local model):
# before the first request, and after one of 125,500 tokens of context.
BEFORE: dict[str, Any] = {
    "session_id": "b5653910-4b2f-4ae5-a9f4-781d3765e0ec",
    "transcript_path": "/home/user/.claude/projects/-p/b5653910.jsonl",
    "cwd": "/home/user/p",
    "effort": {"level": "medium"},
    "model": {"id": "claude-opus-5-5", "display_name": "Opus 5.5"},
    "workspace": {"current_dir": "/home/user/p", "project_dir": "/home/user/p", "added_dirs": []},
    "version": "2.1.332",
    "output_style": {"name": "default"},
    "cost": {
        "total_cost_usd": 0,
        "total_duration_ms": 12980,
        "total_api_duration_ms": 0,
        "total_lines_added": 0,
        "total_lines_removed": 0,
    },
    "context_window": {
        "total_input_tokens": 0,
        "total_output_tokens": 0,
        "context_window_size": 1000000,
        "current_usage": None,
        "used_percentage": None,
        "remaining_percentage": None,
    },
    "exceeds_200k_tokens": False,
    "fast_mode": False,
    "thinking": {"enabled": True},
}
AFTER: dict[str, Any] = {
    **BEFORE,
    "context_window": {
        "total_input_tokens": 125500,
        "total_output_tokens": 3,
        "context_window_size": 1000000,
        "current_usage": {
            "input_tokens": 500,
            "output_tokens": 3,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 125000,
        },
        "used_percentage": 13,
        "remaining_percentage": 87,
    },
}
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def project(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return isolate(monkeypatch, tmp_path)


def _run(payload: object) -> str:
    out = io.StringIO()
    text = payload if isinstance(payload, str) else json.dumps(payload)
    assert main([], io.StringIO(text), out) == 0
    value = out.getvalue()
    assert value.endswith("\n")
    assert value.count("\n") == 1
    return ANSI.sub("", value.strip())


def test_real_payloads_count_down_and_record_the_window(project: Path) -> None:
    before = _run(dict(BEFORE, workspace={"project_dir": str(project)}))
    assert before.startswith("ctx –% ")
    after = _run(dict(AFTER, workspace={"project_dir": str(project)}))
    target = 1_000_000 * CONTEXT_PERCENT // 100
    assert after.startswith("ctx 12% █▎░░░░░░░░ 125.5k/1M")
    assert after.endswith(f"handoff in {(target - 125_500) / 1000:.1f}k ({CONTEXT_PERCENT}%)")
    # The hooks now know this session's (and this model's) window.
    assert _state.recorded_window(BEFORE["session_id"], None) == 1_000_000
    assert _state.recorded_window("another-session", "claude-opus-5-5") == 1_000_000


def test_render_stages() -> None:
    window = 200_000
    target = window * CONTEXT_PERCENT // 100
    assert render(0, window) == f"ctx 0% ░░░░░░░░░░ 0/200k · handoff in {target // 1000}k (60%)"
    line = render(target - 5_000, window)
    assert line.startswith("ctx 57% █████▊░░░░ 115k/200k")
    assert line.endswith("handoff in 5k (60%)")
    due = render(target + 2_000, window, command="/ctxrelay-handoff")
    assert "handoff due (60% reached, +2k): /ctxrelay-handoff" in due
    assert render(target + 2_000, window).endswith("handoff due (60% reached, +2k)")
    assert render(target + 2_000, window, mode="auto").endswith("+2k)")
    assert render(10, window, mode="off").endswith("handoff off")
    assert render(10, window, handoff_phase="writing").endswith("writing the file…")
    assert "/clear" in render(10, window, handoff_phase="ready")
    assert render(window * 2, window).startswith("ctx 200% ██████████")
    colored = render(target, window, color=True)
    assert colored.startswith("\x1b[31m")
    assert colored.endswith("\x1b[0m")


def test_the_setting_wins_over_the_reported_window(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXRELAY_CONTEXT_WINDOW", "200000")
    line = _run(dict(AFTER, workspace={"project_dir": str(project)}))
    assert "125.5k/200k" in line
    assert "handoff due" in line


def test_auto_handoff_progress_shows(project: Path) -> None:
    _state.session_state(BEFORE["session_id"]).set("handoff", {"phase": "writing"})
    assert "writing the file" in _run(dict(AFTER, workspace={"project_dir": str(project)}))


def test_clear_to_continue_only_while_clear_would_load_the_handoff(project: Path) -> None:
    from ctxrelay.claude import handoff

    path = handoff.new_handoff_path(project)
    path.write_text("# Handoff\n")
    _state.session_state(BEFORE["session_id"]).set("handoff", {"phase": "ready", "path": str(path)})
    payload = dict(AFTER, workspace={"project_dir": str(project)})
    assert "/clear to continue" in _run(payload)
    handoff.mark_consumed(project, path)  # a session started from it (or it was dropped)
    assert "/clear" not in _run(payload)
    path.unlink()
    handoff.new_handoff_path(project)  # gone: nothing to load either
    assert "/clear" not in _run(payload)


def test_no_stale_stage_once_the_handoff_is_written_used_or_failed(project: Path) -> None:
    from ctxrelay.claude import handoff

    path = handoff.new_handoff_path(project)
    doc = _state.session_state(BEFORE["session_id"])
    payload = dict(AFTER, workspace={"project_dir": str(project)})
    doc.set("handoff", {"phase": "writing", "path": str(path)})
    assert "writing the file" in _run(payload)
    # Written, before the Stop hook saw it: no longer "writing".
    path.write_text("# Handoff\n")
    assert _run(payload).endswith("handoff ready: /clear to continue")
    # A fresh session started from it: the handoff is over, no stage.
    handoff.mark_consumed(project, path)
    line = _run(payload)
    assert "writing" not in line
    assert "/clear" not in line
    # The write prompt and its retries brought no file: no stage either.
    doc.set("handoff", {"phase": "failed", "path": str(project / "never-written.md")})
    line = _run(payload)
    assert "writing" not in line
    assert "/clear" not in line


@pytest.mark.parametrize("bad", ["", "not json", "[1,2]", '{"context_window": 5}', "null"])
def test_bad_input_prints_a_line_and_exits_zero(project: Path, bad: str) -> None:
    assert _run(bad)


def test_help() -> None:
    out = io.StringIO()
    assert main(["--help"], io.StringIO(""), out) == 0
    assert "example" in out.getvalue()


def test_the_command_imports_no_rich_and_no_sdk(project: Path) -> None:
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from ctxrelay.cli import main\n"
        "code = main(['claude', 'statusline'])\n"
        "heavy = [m for m in ('rich', 'claude_agent_sdk', 'anthropic') if m in sys.modules]\n"
        "print('HEAVY', heavy, code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        input=json.dumps(dict(AFTER, workspace={"project_dir": str(project)})),
        capture_output=True,
        text=True,
        check=True,
    )
    assert "HEAVY [] 0" in done.stdout
    assert "handoff in" in done.stdout


@given(
    tokens=st.one_of(st.none(), st.integers(0, 5_000_000)),
    window=st.integers(1, 2_000_000),
    mode=st.sampled_from(("manual", "auto", "off")),
    phase=st.sampled_from((None, "writing", "ready", "failed")),
)
def test_render_is_one_line_with_a_full_bar_and_the_right_stage(
    tokens: int | None, window: int, mode: str, phase: str | None
) -> None:
    line = render(tokens, window, mode=mode, handoff_phase=phase)
    assert "\n" not in line
    assert len(line.split(" ")[2]) == BAR_WIDTH
    target = window * CONTEXT_PERCENT // 100
    if mode == "off":
        assert line.endswith("handoff off")
    elif phase in ("writing", "ready"):
        assert "handoff" in line
    elif (tokens or 0) < target:
        assert " · handoff in " in line
    else:
        assert " · handoff due " in line
