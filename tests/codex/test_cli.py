"""``ctxrelay codex …`` as a command: registered, a help that teaches, ``--json``, the
slider, and a quiet exit when the reader of its output goes away."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxrelay.cli import main as ctxrelay
from ctxrelay.cli.codex import SUBCOMMANDS


def test_codex_is_a_command_with_its_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    assert ctxrelay(["--help"]) == 0
    assert "codex" in capsys.readouterr().out
    assert ctxrelay(["codex", "--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("install", "uninstall", "doctor", "config"))


@pytest.mark.parametrize("name", sorted(set(SUBCOMMANDS) - {"mcp"}))  # mcp speaks MCP only
def test_each_subcommand_has_examples_and_json(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ctxrelay(["codex", name, "--help"]) == 0
    out = capsys.readouterr().out
    assert f"ctxrelay codex {name}" in out
    assert "examples:" in out
    assert "--json" in out


def test_the_slider_is_set_shown_and_reset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CTXRELAY_CODEX_THRESHOLD", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    where = ["--project-dir", str(project)]
    assert ctxrelay(["codex", "config", *where, "--threshold", "45", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["threshold"], shown["threshold_source"]) == (45, "project")
    stored = json.loads((project / ".ctxrelay" / "config.json").read_text())
    assert stored == {"codex": {"threshold": 45}}  # beside, never inside, the Claude settings
    monkeypatch.setenv("CTXRELAY_CODEX_THRESHOLD", "50")
    assert ctxrelay(["codex", "config", *where, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["threshold_source"] == "env"
    monkeypatch.delenv("CTXRELAY_CODEX_THRESHOLD")
    assert ctxrelay(["codex", "config", *where, "--threshold", "default", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["threshold_source"] == "default"
    assert ctxrelay(["codex", "config", *where, "--threshold", "nine"]) == 1
    assert "the threshold must be a percentage" in capsys.readouterr().err


def test_a_closed_pipe_ends_the_command_quietly(tmp_path: Path) -> None:
    # The reader has gone before a word is written: no traceback, the CLI's one exit code.
    read, write = os.pipe()
    os.close(read)
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-m", "ctxrelay", "codex", "config", "--project-dir", str(tmp_path)],
        stdout=write,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        check=False,
    )
    os.close(write)
    assert done.returncode == 1
    assert done.stderr == ""


@pytest.mark.parametrize(
    ("value", "said", "effective"),
    [
        ("5", "threshold: 5% of the window (applied as 10%, the floor)", 10),
        ("off", "threshold: off (no handoff ask)", None),
        ("45", "threshold: 45% of the window", 45),
    ],
)
def test_config_shows_the_slider_in_effect(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    value: str,
    *,
    said: str,
    effective: int | None,
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CTXRELAY_CODEX_THRESHOLD", raising=False)
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    # From a subfolder: the project's root file is the one written and shown.
    where = ["--project-dir", str(project / "src")]
    assert ctxrelay(["codex", "config", *where, "--threshold", value]) == 0
    out = capsys.readouterr().out
    assert said in out
    assert "100%" not in out
    assert (project / ".ctxrelay" / "config.json").is_file()
    assert ctxrelay(["codex", "config", *where, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["effective_threshold"] == effective
