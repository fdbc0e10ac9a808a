"""What ``ctxrelay claude …`` prints for people wraps at the terminal's width (``COLUMNS``)
at spaces only: doctor, install, uninstall, config and every ``--help``, each run for
real at 80 and 60 columns. No line is wider than the terminal unless it is one word (a
path longer than the line stands alone, whole), and the words are the same as at 1,000
columns, so none was broken ("settings.\\njson")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.cells import cell_len

from ctxrelay.cli.claude import SUBCOMMANDS
from ctxrelay.cli.claude import main as claude_main

WIDE = 1_000
_TABLE = re.compile(r"[│┃━╇]")  # a rich table's rows: their cells wrap within columns
_NUMBER = re.compile(r"\d+(?:\.\d+)?")  # timings differ from run to run


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # A deep project path, as real ones are: its paths outgrow a 60-column line.
    project = tmp_path / "work" / "clients" / "acme-corporation" / "billing-service"
    project.mkdir(parents=True)
    for key, sub in (("HOME", "home"), ("CTXRELAY_STATE_DIR", "state")):
        monkeypatch.setenv(key, str(tmp_path / sub))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for key in ("CTXRELAY_MAIN_HANDOVER", "CTXRELAY_THRESHOLD", "CLAUDE_PROJECT_DIR"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(project)
    return project


def _run(
    argv: list[str],
    columns: int,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    capsys.readouterr()
    claude_main(argv)
    captured = capsys.readouterr()
    return captured.out + captured.err


def _words(text: str) -> list[str]:
    prose = [line for line in text.splitlines() if not _TABLE.search(line)]
    return _NUMBER.sub("N", " ".join(prose)).split()


def _check(narrow: str, wide: str, columns: int) -> None:
    assert narrow.strip()
    over = [
        line
        for line in narrow.splitlines()
        if cell_len(line.rstrip()) > columns and " " in line.strip()
    ]
    assert not over, f"lines over {columns} columns: {over}"
    assert _words(narrow) == _words(wide)


COMMANDS: list[list[str]] = [
    ["install"],
    ["config"],
    ["config", "--mode", "auto", "--threshold", "45"],
    ["doctor", "--runs", "1"],
    ["uninstall"],
]


@pytest.mark.parametrize("columns", [80, 60])
def test_the_commands_wrap_at_spaces(
    project: Path,
    columns: int,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each command as people run it, in order (install, then the ones that read it); the
    # same run at 1,000 columns right after gives the words to compare.
    for argv in COMMANDS:
        narrow = _run(argv, columns, capsys, monkeypatch)
        if argv[0] == "uninstall":  # the second run has nothing to remove
            assert "removed:" in narrow
            assert claude_main(["install"]) == 0
            capsys.readouterr()
        if argv[0] == "install":  # the second run has nothing to add
            assert claude_main(["uninstall"]) == 0
            capsys.readouterr()
        wide = _run(argv, WIDE, capsys, monkeypatch)
        _check(narrow, wide, columns)
    assert not (project / ".claude" / "settings.json").exists()  # uninstalled at the end


@pytest.mark.parametrize("columns", [80, 60])
@pytest.mark.parametrize("sub", [None, *SUBCOMMANDS])
def test_every_help_wraps_at_spaces(
    project: Path,
    sub: str | None,
    columns: int,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    argv = ["--help"] if sub is None else [sub, "--help"]
    _check(
        _run(argv, columns, capsys, monkeypatch),
        _run(argv, WIDE, capsys, monkeypatch),
        columns,
    )
