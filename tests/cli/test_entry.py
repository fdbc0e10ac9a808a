"""How the ``ctxrelay`` command is entered: ``python -m ctxrelay`` and the console script,
both straight into ``ctxrelay.cli.main``."""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from pathlib import Path

from ctxrelay import __version__

PROJECT = Path(__file__).resolve().parents[2]


def _python_m_ctxrelay(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxrelay", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_python_dash_m_runs_the_cli_and_passes_its_exit_code() -> None:
    done = _python_m_ctxrelay("--version")
    assert (done.returncode, done.stdout) == (0, f"ctxrelay {__version__}\n")
    unknown = _python_m_ctxrelay("no-such-command")
    assert unknown.returncode == 2
    assert "unknown command" in unknown.stderr
    bare = _python_m_ctxrelay()
    assert (bare.returncode, bare.stderr) == (2, "")
    assert bare.stdout.startswith("usage: ctxrelay")


def test_the_console_script_enters_main() -> None:
    scripts = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["ctxrelay"] == "ctxrelay.cli:main"


def test_cli_run_names_only_the_run_subcommand_module() -> None:
    # The package once also defined a function ``run``, which importing the submodule
    # silently replaced: ``from ctxrelay.cli import run`` meant one or the other.
    cli = importlib.import_module("ctxrelay.cli")
    assert "run" not in cli.__all__
    run_module = importlib.import_module("ctxrelay.cli.run")
    from ctxrelay.cli import run

    assert run is run_module


def _into_a_closed_pipe(*args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``ctxrelay ARGS`` whose stdout is a pipe nobody reads any more (as after ``| head``
    has exited): every write fails with ``EPIPE``."""
    import os

    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [str(Path(sys.executable).parent / "ctxrelay"), *args],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "HOME": str(home)} if home else None,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write)


def test_a_closed_pipe_ends_every_command_quietly(tmp_path: Path) -> None:
    for args in (
        ("--help",),
        ("claude", "--help"),
        ("policy", "plan", "--limit", "200000", "--reserve", "32000", "--threshold", "60"),
    ):
        done = _into_a_closed_pipe(*args)
        assert (done.returncode, done.stderr) == (1, ""), args


def test_install_and_uninstall_into_a_closed_pipe_are_quiet_and_do_their_work(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    done = _into_a_closed_pipe("claude", "install", "--project-dir", str(project), home=home)
    assert (done.returncode, done.stderr) == (1, "")
    assert (project / ".claude" / "settings.json").is_file()
    done = _into_a_closed_pipe("claude", "uninstall", "--project-dir", str(project), home=home)
    assert (done.returncode, done.stderr) == (1, "")
    assert list(project.iterdir()) == []
