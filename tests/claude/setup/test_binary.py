"""``ctxrelay.claude.setup.binary.cli_path``: the one lookup of the Claude Code CLI."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ctxrelay.claude.setup.binary import cli_path
from ctxrelay.claude.setup.doctor import doctor
from tests.conftest import claude_cli
from tests.hooks.install._launchers import fake_cli


def test_the_bundled_cli_is_found_through_the_package_and_runs() -> None:
    cli = claude_cli()
    assert cli.name == "claude"
    assert cli.parent.name == "_bundled"
    assert os.access(cli, os.X_OK)
    out = subprocess.run(
        [cli, "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert "Claude Code" in out.stdout


def test_claude_on_path_comes_first_unless_the_bundled_one_is_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundled = claude_cli()
    mine = fake_cli(tmp_path, "claude", "9.9.9 (Claude Code)")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert (cli_path(), cli_path(bundled=True)) == (mine, bundled)


def test_doctor_reports_the_cli_it_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = fake_cli(tmp_path / "bin", "claude", "9.9.9 (Claude Code)")
    monkeypatch.setenv("PATH", f"{mine.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    report = doctor(tmp_path, tmp_path / "home", runs=1)
    assert report.claude_cli == str(mine)
    assert report.claude_version == "9.9.9"
    assert report.mods is True  # 9.9.9 >= the first version that loads mods
