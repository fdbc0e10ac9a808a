"""The plugin's hook launcher (``hooks/run-hook.sh``) run by a real ``sh``: it finds
``ctxrelay-hook`` on PATH or where pipx and uv install tools, and without one the
``SessionStart`` hook tells the user how to install it while every event exits 0."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxrelay.claude.host import CLAUDE
from ctxrelay.claude.setup._snippet import PLUGIN_LAUNCHER, plugin_dir, plugin_hook_command

HOOK = Path(sys.executable).parent / "ctxrelay-hook"
BARE_PATH = "/usr/bin:/bin"


def run(
    event: str, home: Path, cwd: Path, *, path: str = BARE_PATH
) -> subprocess.CompletedProcess[str]:
    """The plugin's command for ``event``, as Claude Code runs it, ``cat big.txt`` in."""
    # About 19 KB: more than the guard lets through whole, under Claude Code's default
    # 30,000-character cap (a longer output would reach the model as its short preview).
    (cwd / "big.txt").write_text("".join(f"{i}\n" for i in range(4000)))
    payload = {
        "session_id": "s-launcher",
        "transcript_path": str(cwd / "t.jsonl"),
        "cwd": str(cwd),
        "hook_event_name": event,
        "tool_name": "Bash",
        "tool_input": {"command": "cat big.txt"},
        "tool_use_id": "toolu_1",
        "source": "startup",
    }
    env = {
        "PATH": path,
        "HOME": str(home),
        "CLAUDE_PLUGIN_ROOT": str(plugin_dir()),
        "CTXRELAY_STATE_DIR": str(home / "state"),
    }
    return subprocess.run(
        ["/bin/sh", "-c", plugin_hook_command(event)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def _denied(done: subprocess.CompletedProcess[str]) -> bool:
    answer = json.loads(done.stdout)
    return bool(answer["hookSpecificOutput"]["permissionDecision"] == "deny")


def test_without_ctxrelay_hook_session_start_says_how_to_install_it(
    home: Path, tmp_path: Path
) -> None:
    assert (plugin_dir() / PLUGIN_LAUNCHER).is_file()
    for event in CLAUDE.handlers:
        done = run(event, home, tmp_path)
        assert done.returncode == 0, event
        assert done.stderr == "", event
        if event != "SessionStart":
            assert done.stdout == "", event
    said = run("SessionStart", home, tmp_path).stdout
    assert said.count("\n") == 1
    message = json.loads(said)["systemMessage"]
    assert message.startswith("ctxrelay: no ctxrelay-hook command found")
    assert "pipx install '.[claude]'" in message


def test_a_marketplace_clone_is_named_as_the_place_to_install_from(
    home: Path, tmp_path: Path
) -> None:
    clone = home / ".claude" / "plugins" / "marketplaces" / "ctxrelay"
    clone.mkdir(parents=True)
    (clone / "pyproject.toml").write_text("[project]\nname = 'ctxrelay'\n")
    message = json.loads(run("SessionStart", home, tmp_path).stdout)["systemMessage"]
    assert f"pipx install '{clone}[claude]'" in message


@pytest.mark.parametrize(
    "where",
    [
        ".local/bin",  # pipx's and uv's default bin directory
        ".local/share/pipx/venvs/ctxrelay/bin",
        ".local/share/uv/tools/ctxrelay/bin",
    ],
)
def test_ctxrelay_hook_is_found_where_pipx_and_uv_put_it(
    home: Path, tmp_path: Path, where: str
) -> None:
    (home / where).mkdir(parents=True)
    (home / where / "ctxrelay-hook").symlink_to(HOOK)
    done = run("PreToolUse", home, tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert _denied(done)


def test_ctxrelay_hook_on_path_comes_first(home: Path, tmp_path: Path) -> None:
    done = run("PreToolUse", home, tmp_path, path=f"{HOOK.parent}:{BARE_PATH}")
    assert (done.returncode, done.stderr) == (0, "")
    assert _denied(done)
