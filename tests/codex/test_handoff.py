"""The Codex main session's handoff through the hook Codex runs, on rollouts shaped like
Codex's: ``Stop`` asks once at the slider and not before; a fresh session's
``SessionStart`` is pointed at the file until a session has started from it (its first
response in its rollout), as the Claude Code host's once-only and crash rules; the
slider is ``ctxrelay codex config``'s and the window the one Codex wrote into the rollout
(else ``model_context_window`` of ``config.toml``, else the model table's)."""

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
from ctxrelay.hooks import chain as _chain
from ctxrelay.hooks.handoff import consumed, injected_into, reserved_by
from tests.transcripts._codex_lines import THREAD, Rollout

WINDOW = 258_400  # what Codex 0.171 writes into the rollout for every model
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


@pytest.fixture(autouse=True)
def killed_codex(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each hook runs in-process here, under no Codex: the Codex process its start records
    is one that has ended, as after a kill (``tests/hooks/test_handoff_reach.py`` runs
    starts under live processes)."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    monkeypatch.setattr(_chain, "host_process", lambda: gone.pid)


def rollout(
    project: Path, tokens: int, window: int = WINDOW, model: str = "gpt-5.5", source: str = "cli"
) -> Path:
    """A rollout of the TUI (``source``) whose turn names ``window`` (0: none, as before
    Codex wrote one)."""
    path = project.parent / "rollout.jsonl"
    turn = Rollout(cwd=str(project), source=source).turn(model, window=window)
    return turn.response("resp_1", tokens - 40).write(path)


def answer(payload: dict[str, Any]) -> dict[str, Any] | None:
    out = io.StringIO()
    assert hook.main(io.StringIO(json.dumps(payload)), out) == 0
    return json.loads(out.getvalue()) if out.getvalue() else None


def stop(
    project: Path, transcript: Path, *, active: bool = False, session: str = THREAD
) -> dict[str, Any] | None:
    return answer(
        {
            "hook_event_name": "Stop",
            "session_id": session,
            "turn_id": "turn-1",
            "transcript_path": str(transcript),
            "cwd": str(project),
            "model": "gpt-5.5",
            "stop_hook_active": active,
            "last_assistant_message": "ok",
        }
    )


FRESH = "01a2331b-0000-7000-8000-000000000002"
LATER = "01a2331c-0000-7000-8000-000000000003"


def fresh_rollout(project: Path, session: str) -> Path:
    """Where a fresh thread's rollout goes (Codex creates it with the first prompt)."""
    return project.parent / f"rollout-{session}.jsonl"


def start(project: Path, source: str, session: str = FRESH) -> Any:
    return answer(
        {
            "hook_event_name": "SessionStart",
            "session_id": session,
            "transcript_path": str(fresh_rollout(project, session)),
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


def test_the_rollouts_window_wins_over_the_model_table(project: Path) -> None:
    # gpt-5 is 400,000 in the table: its slider would be far past this.
    assert (main_budget(context_window_for("gpt-5")).handoff_target or 0) > TARGET
    asked = stop(project, rollout(project, TARGET, model="gpt-5"))
    assert asked is not None
    assert f"{WINDOW:,}-token window" in asked["reason"]


def test_without_a_window_in_the_rollout_config_toml_then_the_table(project: Path) -> None:
    table = main_budget(context_window_for("gpt-5.5")).handoff_target or 0
    assert stop(project, rollout(project, table - 1, window=0)) is None
    assert stop(project, rollout(project, table, window=0)) is not None
    home = Path(os.environ["CODEX_HOME"])
    home.mkdir()
    (home / "config.toml").write_text("model_context_window = 100000\n")
    target = main_budget(100_000).handoff_target or 0
    assert target < TARGET
    assert stop(project, rollout(project, target, window=0), session="other") is not None


def asked_path(asked: dict[str, Any] | None) -> Path:
    assert asked is not None
    return Path(asked["reason"].split("exactly this path:\n\n    ", 1)[1].split("\n", 1)[0])


def written_handoff(project: Path) -> tuple[Path, Path]:
    """The ask at the slider, then the file written in the same turn and the ``Stop``
    after it (``stop_hook_active``); returns the file and the writer's rollout."""
    transcript = rollout(project, TARGET)
    path = asked_path(stop(project, transcript))
    path.write_text("# Handoff\n\n## Goal\nship it\n\n## Next step\nRun the tests.\n")
    assert stop(project, transcript, active=True) is None
    return path, transcript


def first_response(project: Path, session: str) -> Path:
    """The fresh thread's first response, written to its rollout."""
    path = fresh_rollout(project, session)
    return Rollout(session, cwd=str(project)).turn("gpt-5.5").response("resp_9", 9_000).write(path)


def note_of(answer: dict[str, Any] | None) -> str:
    assert answer is not None
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    text: str = answer["hookSpecificOutput"]["additionalContext"]
    return text


def test_a_fresh_session_is_pointed_at_the_file(project: Path) -> None:
    path, _ = written_handoff(project)
    assert start(project, "resume") is None  # a resumed thread keeps its context
    context = note_of(start(project, "clear"))
    assert str(path) in context
    assert "Run the tests." in context
    assert len(context) < 2_500  # far under Codex's spill of 2,500 tokens: never cut
    # Injected, not consumed: recorded against the thread it went to.
    assert not consumed(project, path.name)
    assert [link.session_id for link in injected_into(project, path.name)] == [FRESH]


def test_the_stop_that_asked_records_the_writer_once_the_file_exists(project: Path) -> None:
    transcript = rollout(project, TARGET)
    path = asked_path(stop(project, transcript))
    writer = _chain.ChainLink("codex", THREAD, str(transcript))
    assert reserved_by(project, path.name) == writer  # known should the write crash
    assert _chain.written_by(project, path.name) is None  # no file yet
    path.write_text("# Handoff\n\n## Next step\nRun the tests.\n")
    assert stop(project, transcript, active=True) is None
    assert _chain.written_by(project, path.name) == writer


def test_a_session_killed_before_its_first_response_leaves_the_file_offered(
    project: Path,
) -> None:
    path, _ = written_handoff(project)
    assert str(path) in note_of(start(project, "clear"))
    # Killed before its first response: no rollout at all, then one with the prompt only.
    assert str(path) in note_of(start(project, "startup", LATER))
    Rollout(LATER, cwd=str(project)).turn("gpt-5.5").write(fresh_rollout(project, LATER))
    third = "01a2331d-0000-7000-8000-000000000004"
    assert str(path) in note_of(start(project, "startup", third))
    assert not consumed(project, path.name)
    assert [x.session_id for x in injected_into(project, path.name)] == [FRESH, LATER, third]


def test_the_first_response_consumes_it_at_the_next_start(project: Path) -> None:
    path, writer = written_handoff(project)
    assert start(project, "clear") is not None
    first_response(project, FRESH)  # then killed: no Stop of its own ran
    assert start(project, "startup", LATER) is None
    assert consumed(project, path.name)
    fresh = _chain.ChainLink("codex", FRESH, str(fresh_rollout(project, FRESH)))
    assert _chain.started_by(project, path.name) == fresh
    assert _chain.chain(project, fresh) == [_chain.ChainLink("codex", THREAD, str(writer)), fresh]


def test_the_first_response_consumes_it_at_that_sessions_stop(project: Path) -> None:
    path, _ = written_handoff(project)
    assert start(project, "clear") is not None
    assert stop(project, fresh_rollout(project, FRESH), session=FRESH) is None
    assert not consumed(project, path.name)  # a Stop with no response on disk yet
    transcript = first_response(project, FRESH)
    assert stop(project, transcript, session=FRESH) is None
    assert consumed(project, path.name)
    assert _chain.started_by(project, path.name) == _chain.ChainLink(
        "codex", FRESH, str(transcript)
    )
    assert start(project, "startup", LATER) is None


def test_a_session_that_started_from_an_older_file_is_offered_the_newer_one(
    project: Path,
) -> None:
    older, _ = written_handoff(project)
    assert start(project, "clear") is not None
    # The fresh session works up to the slider and hands off in turn; the next start
    # gets the newer file only.
    busy = (
        Rollout(FRESH, cwd=str(project), source="cli")
        .turn("gpt-5.5")
        .response("resp_9", TARGET - 40)
    )
    busy.write(fresh_rollout(project, FRESH))
    newer = asked_path(stop(project, fresh_rollout(project, FRESH), session=FRESH))
    assert newer != older
    newer.write_text("# Handoff\n\n## Next step\nShip it.\n")
    context = note_of(start(project, "clear", LATER))
    assert str(newer) in context
    assert str(older) not in context
    assert consumed(project, older.name)


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
    # Nor anything install-time: the core's install machinery, the host's setup/ (the
    # app-server client among it).
    install_time = ("ctxrelay.hooks.install", "ctxrelay.codex.setup")
    for heavy in ("subprocess", "threading", *install_time, "ctxrelay.cli", "rich"):
        assert heavy not in loaded


def test_codex_exec_is_asked_inside_the_turn_never_at_its_stop(project: Path) -> None:
    transcript = rollout(project, TARGET, source="exec")
    assert stop(project, transcript) is None  # its reply would replace the task's answer
    asked = answer(
        {
            "hook_event_name": "PostToolUse",
            "session_id": THREAD,
            "turn_id": "turn-1",
            "transcript_path": str(transcript),
            "cwd": str(project),
            "model": "gpt-5.5",
            "tool_name": "Bash",
            "tool_input": {"command": "echo hi"},
            "tool_response": "hi\n",
            "tool_use_id": "call_1",
        }
    )
    assert asked is not None
    context = asked["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("[ctxrelay] Hand off now")
    assert "end this turn with your answer to the user" in context
    assert stop(project, transcript) is None  # asked once


def test_a_session_in_a_subfolder_uses_the_projects_root(project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "src" / "deep").mkdir(parents=True)
    set_threshold("30", "project", project)
    low = main_budget(WINDOW, 30).handoff_target or 0
    transcript = rollout(project, low)
    asked = stop(project / "src" / "deep", transcript)
    assert asked is not None  # the root's slider
    assert asked_path(asked).parent == project / ".ctxrelay" / "handoff"
