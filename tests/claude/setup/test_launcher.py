"""The hook commands install may write (``ctxrelay.claude.setup.launcher`` and
``ctxrelay.codex.setup.launcher``): this environment's, by absolute path, started as every Python
tool starts: the console script, or ``python -I -m``; never ``-S``, never a ``sys.path``
built by hand (which left out ``site-packages`` and with it the guard's parser)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ctxrelay.claude.setup import launcher
from ctxrelay.codex.setup import launcher as codex_launcher
from tests.claude.guard._payloads import bash

# What the previous version wrote: how an install of it looks in a settings file.
OLD_CODEX = (
    f'{sys.executable} -I -S -c \'import sys; sys.path.append("/x/src"); '
    "from ctxrelay.codex.hook import run; run()'"
)


def _plain(command: str) -> None:
    words = shlex.split(command)
    assert os.path.isabs(words[0])
    assert "-S" not in words
    assert "-c" not in words
    assert "sys.path" not in command


def test_the_console_script_comes_first_then_python_dash_m(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "ctxrelay-hook"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setattr(launcher, "scripts_dir", lambda: tmp_path)
    found = launcher.hook_candidates()
    python = shlex.quote(os.path.abspath(sys.executable))
    assert found == [shlex.quote(str(script)), f"{python} -I -m ctxrelay.claude.hook"]
    for command in found:
        _plain(command)


def test_without_a_console_script_the_hook_is_python_dash_m(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launcher, "scripts_dir", lambda: tmp_path)
    (tmp_path / "ctxrelay-hook").write_text("not executable")
    assert launcher.hook_candidates() == [launcher.module_hook("ctxrelay.claude.hook")]


def test_the_codex_hook_is_python_dash_m_and_is_known_as_ours() -> None:
    (command,) = codex_launcher.hook_candidates()
    _plain(command)
    assert shlex.split(command)[1:] == ["-I", "-m", "ctxrelay.codex.hook"]
    assert codex_launcher.is_ours(command)
    # An install by the previous version is still ctxrelay's (uninstall, doctor, upgrade).
    assert codex_launcher.is_ours(OLD_CODEX)
    assert not codex_launcher.is_ours("python -m something.else")
    assert not codex_launcher.is_ours(None)


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
        ["/bin/sh", "-c", launcher.module_hook("ctxrelay.claude.hook")],
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
