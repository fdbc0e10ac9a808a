"""The hook commands install may write (``ctxrelay.hooks.install.launch``, for every
host): this environment's, by absolute path, started as every Python tool starts: the
console script, or ``python -I -m``; never ``-S``, never a ``sys.path`` built by hand
(which left out ``site-packages`` and with it the guard's parser). An installed command
of either form, or of the older layout, is known as ctxrelay's."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ctxrelay.hooks.install import launch
from tests.claude.guard._payloads import bash
from tests.hooks.install._launchers import PYTHON, fake_cli, older_layout

MODULE = "ctxrelay.claude.hook"


def _plain(command: str) -> None:
    words = shlex.split(command)
    assert os.path.isabs(words[0])
    assert "-S" not in words
    assert "-c" not in words
    assert "sys.path" not in command
    assert not launch.older_layout(command)


def test_the_console_script_comes_first_then_python_dash_m(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launch, "scripts_dir", lambda: tmp_path)
    script = fake_cli(tmp_path, "my-hook", "")
    found = launch.hook_candidates(MODULE, "my-hook")
    python = shlex.quote(PYTHON)
    assert found == [shlex.quote(str(script)), f"{python} -I -m {MODULE}"]
    for command in found:
        _plain(command)
    assert launch.hook_candidates(MODULE) == [f"{python} -I -m {MODULE}"]  # no script named


def test_without_a_console_script_the_hook_is_python_dash_m(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launch, "scripts_dir", lambda: tmp_path)
    (tmp_path / "my-hook").write_text("not executable")
    assert launch.hook_candidates(MODULE, "my-hook") == [launch.module_hook(MODULE)]


def test_the_ctxrelay_command_is_the_console_script_else_python_dash_m(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launch, "scripts_dir", lambda: tmp_path)
    assert launch.ctxrelay_command() == f"{shlex.quote(PYTHON)} -m ctxrelay"
    script = fake_cli(tmp_path, "ctxrelay", "")
    assert launch.ctxrelay_command() == shlex.quote(str(script))


def test_every_form_an_install_wrote_is_known_as_ctxrelays() -> None:
    module = launch.module_hook(MODULE)
    assert launch.runs_hook(module, MODULE)
    assert launch.runs_hook(older_layout(MODULE), MODULE)  # the older layout's
    assert launch.runs_hook("/venv/bin/my-hook", MODULE, "my-hook")
    assert launch.runs_hook("'/my venv/bin/my-hook'", MODULE, "my-hook")
    assert launch.runs_hook("my-hook", MODULE, "my-hook")  # a snippet pasted by hand
    assert not launch.runs_hook("my-hook", MODULE)  # no script named
    assert not launch.runs_hook("python -m something.else", MODULE)
    assert not launch.runs_hook(f"python -m {MODULE}s", MODULE)  # another module
    assert not launch.runs_hook(f"python -m x{MODULE}", MODULE)
    assert not launch.runs_hook("echo my-hook", MODULE, "my-hook")
    assert not launch.runs_hook("'unclosed", MODULE, "my-hook")
    assert not launch.runs_hook(None, MODULE)


def test_the_older_layout_is_told_apart() -> None:
    assert launch.older_layout(older_layout(MODULE))
    assert launch.older_layout(older_layout("ctxrelay.codex.hook"))
    for command in launch.hook_candidates(MODULE, "ctxrelay-hook"):
        assert not launch.older_layout(command)
    assert not launch.older_layout(f"{PYTHON} -S -m {MODULE}")
    assert not launch.older_layout("'unclosed")
    assert not launch.older_layout(None)
    note = launch.older_layout_note(Path("/p/.claude/settings.json"), "ctxrelay claude install")
    assert note.count(". ") == 0  # one sentence
    assert "/p/.claude/settings.json" in note
    assert note.endswith("'ctxrelay claude install' upgrades them")


def test_isolated_python_keeps_site_packages_and_the_guards_parser(tmp_path: Path) -> None:
    # -I drops the current directory, PYTHON* variables and the user site, but keeps
    # site: this environment's site-packages (where tree-sitter is, and an editable
    # install's .pth file) stay on sys.path.
    (tmp_path / "tree_sitter.py").write_text("raise SystemExit('shadowed')\n")
    done = subprocess.run(
        [sys.executable, "-I", "-c", "import ctxrelay, tree_sitter, tree_sitter_bash"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr  # a file in the project shadows nothing


def test_the_module_form_answers_a_payload_through_the_shell(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"{i}\n" for i in range(3000)))
    done = subprocess.run(
        ["/bin/sh", "-c", launch.module_hook(MODULE)],
        input=json.dumps(bash('cat "big.txt"', str(tmp_path))),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "CTXRELAY_STATE_DIR": str(tmp_path / "state")},
        check=False,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
