"""Commands that messages suggest run as printed: ``ctxrelay`` when that is on PATH, else
the path of the environment's own ``ctxrelay``."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ctxrelay.cli import main
from ctxrelay.cli._suggest import ctxrelay_command, suggest
from ctxrelay.cli.sessions import SHOW_ONE

BIN = Path(sys.executable).parent


def _path_without_the_venv() -> str:
    return os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep) if Path(p) != BIN
    )


def test_the_spelling_follows_path_and_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not (BIN / "ctxrelay").exists():
        pytest.skip("ctxrelay is not installed next to this interpreter")
    monkeypatch.setenv("PATH", _path_without_the_venv())
    monkeypatch.chdir(tmp_path)
    assert ctxrelay_command() == shlex.quote(str(BIN / "ctxrelay"))
    monkeypatch.chdir(BIN.parent.parent)
    assert ctxrelay_command() == os.path.join(BIN.parent.name, BIN.name, "ctxrelay")
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{_path_without_the_venv()}")
    assert ctxrelay_command() == "ctxrelay"
    assert suggest("sessions", "show", "a b") == "ctxrelay sessions show 'a b'"


def _suggested(out: str, after: str) -> str:
    lines = out.splitlines()
    return lines[lines.index(after) + 1].strip()


def test_the_commands_the_demo_and_list_print_run_as_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if not (BIN / "ctxrelay").exists():
        pytest.skip("ctxrelay is not installed next to this interpreter")
    monkeypatch.setenv("PATH", _path_without_the_venv())
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)
    db = str(tmp_path / "d.db")
    assert main(["demo", "--db", db, "--workspace", str(tmp_path / "w")]) == 0
    command = _suggested(capsys.readouterr().out, "Inspect it with:")
    assert main(["sessions", "list", "--db", db]) == 0
    listed = _suggested(capsys.readouterr().out, SHOW_ONE)
    for line in (command, listed):
        assert not line.startswith("ctxrelay ")  # not on PATH here
        done = subprocess.run(
            shlex.split(line),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "PATH": _path_without_the_venv(), "COLUMNS": "80"},
        )
        assert done.returncode == 0, (line, done.stderr)
        assert "window 1 · sealed by new_context" in done.stdout
