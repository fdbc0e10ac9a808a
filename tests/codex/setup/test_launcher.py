"""Codex's hook command (``ctxrelay.codex.setup.launcher``): ``python -I -m
ctxrelay.codex.hook`` by this environment's interpreter; the older layout's command is
still ctxrelay's (uninstall, doctor and the upgrade find it)."""

from __future__ import annotations

import shlex

from ctxrelay.codex.setup import launcher
from tests.hooks.install._launchers import PYTHON, older_layout


def test_the_codex_hook_is_python_dash_m_and_is_known_as_ours() -> None:
    (command,) = launcher.hook_candidates()
    assert shlex.split(command) == [PYTHON, "-I", "-m", "ctxrelay.codex.hook"]
    assert launcher.is_ours(command)
    assert launcher.is_ours(older_layout("ctxrelay.codex.hook"))
    assert not launcher.is_ours(older_layout("ctxrelay.claude.hook"))
    assert not launcher.is_ours("python -m something.else")
    assert not launcher.is_ours(None)
