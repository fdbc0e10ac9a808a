"""Claude Code's hook commands (``ctxrelay.claude.setup.launcher``): the
``ctxrelay-hook`` console script first, then ``python -I -m ctxrelay.claude.hook``; every
form an install wrote, the bare name of the shipped snippet among them, is ctxrelay's."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from ctxrelay.claude.setup import launcher
from ctxrelay.hooks.install import launch
from tests.hooks.install._launchers import PYTHON, fake_cli, older_layout


def test_the_console_script_comes_first_then_python_dash_m(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(launch, "scripts_dir", lambda: tmp_path)
    script = shlex.quote(str(fake_cli(tmp_path, "ctxrelay-hook", "")))
    python = shlex.quote(PYTHON)
    assert launcher.hook_candidates() == [script, f"{python} -I -m ctxrelay.claude.hook"]


def test_every_form_of_the_hook_is_ours_and_nothing_else() -> None:
    for command in (
        *launcher.hook_candidates(),
        "ctxrelay-hook",
        "/home/me/.local/bin/ctxrelay-hook",
        older_layout("ctxrelay.claude.hook"),
    ):
        assert launcher.is_ours(command), command
    for other in (
        "my-stop-hook",
        older_layout("ctxrelay.codex.hook"),
        "ctxrelay claude statusline",
    ):
        assert not launcher.is_ours(other), other
