"""``ctxrelay codex doctor`` without Codex (trust is the e2e tests' part): each installed
hook is run on real payloads, one of them a command only the guard's parser judges."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.codex.setup.doctor import doctor
from ctxrelay.codex.setup.install import install
from ctxrelay.codex.setup.launcher import hook_candidates
from ctxrelay.hooks.install.launch import older_layout_note
from ctxrelay.hooks.install.probe import NO_PARSER
from tests.hooks.install._launchers import PYTHON, without_parser


def test_a_hook_that_cannot_parse_shell_syntax_is_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    home, project = tmp_path / "codex-home", tmp_path / "project"
    project.mkdir()
    # What the previous version wrote: it still counts as ctxrelay's, and doctor says
    # what is wrong with it and which interpreter needs the guard extra.
    install(home / "hooks.json", without_parser("ctxrelay.codex.hook"))
    report = doctor(project, home, None)
    assert [i.where for i in report.installed] == ["user"]
    (problem,) = [p for p in report.problems if NO_PARSER in p]
    assert problem.startswith(f"the PreToolUse hook in {home / 'hooks.json'} ")
    assert f"{PYTHON} -m pip install" in problem
    assert all(c.ok for c in report.checks if c.kind != "PreToolUse hook")
    # One sentence says the install is of the older layout and install upgrades it.
    upgrade = older_layout_note(home / "hooks.json", "ctxrelay codex install --user")
    assert report.notes.count(upgrade) == 1
    install(home / "hooks.json", hook_candidates()[0])
    report = doctor(project, home, None)
    assert upgrade not in report.notes
    assert not [p for p in report.problems if NO_PARSER in p]
    assert json.loads((home / "hooks.json").read_text())["hooks"]  # doctor changed nothing
