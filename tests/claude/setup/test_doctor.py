"""``ctxrelay claude doctor`` runs each installed command as Claude Code would, with a
real payload, and exits 1 when anything is wrong (0 when all works)."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.claude.setup._snippet import plugin_dir
from ctxrelay.claude.setup.doctor import MODS_MIN_VERSION, doctor
from ctxrelay.cli.claude import main
from ctxrelay.hooks.install.launch import older_layout_note
from tests.conftest import claude_cli


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    # Only the bundled CLI: the version doctor reports is the one these tests know.
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    root = tmp_path / "project"
    (root / ".claude").mkdir(parents=True)
    return root


def _doctor(project: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(["doctor", "--project-dir", str(project), "--runs", "1", "--json"])
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return code, report


def test_a_working_install_is_proved_and_exits_0(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claude_cli()  # skips without the bundled CLI
    assert main(["install", "--project-dir", str(project)]) == 0
    code, report = _doctor(project, capsys)
    assert report["problems"] == []
    assert (code, report["ok"]) == (0, True)
    kinds = {c["kind"]: c for c in report["checks"]}
    assert set(kinds) == {"hook", "statusline", "skill", "mcp"}
    assert all(c["ok"] for c in report["checks"])
    assert "denied" in kinds["hook"]["detail"]
    assert kinds["mcp"]["detail"] == "the server ctxrelay starts and lists session_history"
    assert kinds["mcp"]["command"].endswith(" claude mcp")
    assert report["hook_ms"] > 0
    if shutil.which("node"):  # the hooks' peer, as bench/hooks.py compares them
        assert report["hook_ratio"] == round(report["hook_ms"] / report["node_ms"], 2)
    else:
        assert report["hook_ratio"] is None
    assert (report["mode"], report["mode_source"]) == ("manual", "default")
    version = tuple(int(p) for p in report["claude_version"].split("."))
    assert report["mods"] is (version >= MODS_MIN_VERSION)
    assert [f["where"] for f in report["installed"]] == ["project"]


def test_a_hook_that_cannot_start_is_a_broken_install_exit_1(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["install", "--project-dir", str(project)]) == 0
    settings = project / ".claude" / "settings.json"
    # The environment install ran from is gone (a deleted or moved venv).
    hook = json.loads((project / ".claude" / "ctxrelay-install.json").read_text())["commands"]
    first = json.dumps(hook["hook"])[1:-1].split(" ")[0]  # the script, or the interpreter
    gone = str(project / "old-venv" / "bin" / Path(first).name)
    settings.write_text(settings.read_text().replace(first, gone))
    code, report = _doctor(project, capsys)
    assert (code, report["ok"]) == (1, False)
    (failed,) = [c for c in report["checks"] if c["kind"] == "hook"]
    assert failed["ok"] is False
    assert gone in failed["command"]
    assert any(gone in p and "exited 127" in p for p in report["problems"])


def test_a_hook_that_runs_but_does_not_guard_is_broken(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A hook command that starts and exits 0 but lets `cat` through.
    settings = {
        "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "true # ctxrelay"}]}]}
    }
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    code, report = _doctor(project, capsys)
    assert code == 1
    assert any("was not denied" in p for p in report["problems"])


def test_an_install_whose_hook_cannot_parse_shell_syntax_is_broken(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The previous version's command (python -I -S -c, sys.path built by hand) denies
    # `cat big.txt` but cannot import tree-sitter: doctor says so, naming the interpreter.
    from ctxrelay.hooks.install.probe import NO_PARSER, PARSER_COMMAND
    from tests.hooks.install._launchers import PYTHON, without_parser

    half = without_parser("ctxrelay.claude.hook")
    settings = {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": half}]}]}}
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    code, report = _doctor(project, capsys)
    assert code == 1
    (hook,) = [c for c in report["checks"] if c["kind"] == "hook"]
    assert hook["ok"] is False
    assert NO_PARSER in hook["detail"]
    (problem,) = [p for p in report["problems"] if NO_PARSER in p]
    assert PARSER_COMMAND in problem
    assert f"{PYTHON} -m pip install" in problem
    # The command is of the older layout: one sentence says that install upgrades it.
    settings_file = project / ".claude" / "settings.json"
    (note,) = [n for n in report["notes"] if "older ctxrelay" in n]
    assert note == older_layout_note(settings_file, "ctxrelay claude install")
    # The sentences print as they are: rich markup does not eat "[guard]".
    assert main(["doctor", "--project-dir", str(project), "--runs", "1"]) == 1
    out = capsys.readouterr().out
    said = " ".join(out.split())  # the sentences wrap at the terminal's width
    assert "pip install 'ctxrelay[guard]'" in said
    assert f"Note: {note}." in said


def test_install_upgrades_an_install_of_the_older_layout_and_doctor_stops_saying_so(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxrelay.claude.setup.install import Commands, install
    from tests.hooks.install._launchers import older_layout

    settings = project / ".claude" / "settings.json"
    install(settings, Commands(older_layout("ctxrelay.claude.hook"), "ctxrelay"))
    _, report = _doctor(project, capsys)
    assert older_layout_note(settings, "ctxrelay claude install") in report["notes"]
    assert main(["install", "--project-dir", str(project)]) == 0
    _, report = _doctor(project, capsys)
    assert not [n for n in report["notes"] if "older ctxrelay" in n]
    assert [c["ok"] for c in report["checks"] if c["kind"] == "hook"] == [True]


def test_nothing_installed_exits_1_and_says_what_to_do(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = _doctor(project, capsys)
    assert code == 1
    assert report["installed"] == []
    assert any("run ctxrelay claude install" in p for p in report["problems"])


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """Output on one line per sentence: these tests read what is said, not its wrapping
    (tests/claude/test_output_width.py checks that)."""
    monkeypatch.setenv("COLUMNS", "1000")


@pytest.mark.usefixtures("wide")
def test_the_human_report_is_sentences_and_a_table_never_a_repr(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["install", "--project-dir", str(project)]) == 0
    capsys.readouterr()
    code = main(["doctor", "--project-dir", str(project), "--runs", "1"])
    out = capsys.readouterr().out
    assert code == (0 if shutil.which("claude") or _bundled() else 1)
    for repr_mark in ("{'", "': ", "None", "True", "False", "PosixPath", "Check("):
        assert repr_mark not in out, repr_mark
    assert re.search(r"^ctxrelay is installed in the project settings ", out, re.M)
    assert re.search(r"^hook +│ yes", out, re.M)
    if shutil.which("node"):
        assert re.search(r"^The hook takes \d+ ms, [\d.]+ times a bare Node start", out, re.M)
    assert re.search(r"^The handoff mode is manual \(the default\)\.$", out, re.M)


def _bundled() -> bool:
    from ctxrelay.claude.setup.binary import cli_path

    return cli_path(bundled=True) is not None


def _plugin_install(home: Path, project: Path) -> Path:
    """The plugin as Claude Code installs it: a copy in its cache, enabled in the
    project's settings and named in ``installed_plugins.json``."""
    cache = home / ".claude" / "plugins" / "cache" / "ctxrelay" / "ctxrelay" / "0.1.0"
    shutil.copytree(plugin_dir(), cache)
    (home / ".claude" / "plugins" / "installed_plugins.json").write_text(
        json.dumps(
            {
                "version": 2,
                "plugins": {
                    "ctxrelay@ctxrelay": [
                        {"scope": "project", "installPath": str(cache), "projectPath": str(project)}
                    ]
                },
            }
        )
    )
    (project / ".claude" / "settings.json").write_text(
        json.dumps({"enabledPlugins": {"ctxrelay@ctxrelay": True}})
    )
    return cache


def test_the_plugin_route_is_checked_through_its_launcher(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    cache = _plugin_install(home, project)
    # No ctxrelay-hook anywhere the launcher looks: broken.
    report = doctor(project, home, runs=1)
    (found,) = report.installed
    assert (found.where, found.path) == ("plugin", cache)
    assert not report.ok
    # The problem is what the plugin's SessionStart hook tells the user.
    assert any("no ctxrelay-hook command found" in p for p in report.problems), report.problems
    # Where pipx puts it: found, and the chain works.
    pipx_bin = home / ".local" / "bin"
    pipx_bin.mkdir(parents=True)
    (pipx_bin / "ctxrelay-hook").symlink_to(Path(sys.executable).parent / "ctxrelay-hook")
    report = doctor(project, home, runs=1)
    (hook,) = [c for c in report.checks if c.kind == "hook"]
    assert hook.ok, hook.detail
    assert os.environ["PATH"] == "/usr/bin:/bin"  # not found through PATH


def test_both_routes_at_once_is_a_problem_the_hooks_would_run_twice(
    project: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    _plugin_install(home, project)
    settings = project / ".claude" / "settings.json"
    enabled = json.loads(settings.read_text())
    assert main(["install", "--project-dir", str(project)]) == 0
    settings.write_text(json.dumps({**json.loads(settings.read_text()), **enabled}))
    report = doctor(project, home, runs=1)
    assert {f.where for f in report.installed} == {"project", "plugin"}
    assert any("every hook runs twice" in p for p in report.problems)


def test_a_settings_install_without_its_auto_handoff_mod_is_a_problem(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claude_cli()  # skips without the bundled CLI
    assert main(["install", "--project-dir", str(project)]) == 0
    code, report = _doctor(project, capsys)
    assert any("auto-handoff mod is in" in note for note in report["notes"])
    module = next((project / ".claude" / "skills").glob("*/hooks/*.js"))
    module.write_text(module.read_text() + "\n// edited by hand\n")
    code, report = _doctor(project, capsys)
    assert code == 1
    assert any("differs from this ctxrelay's" in p for p in report["problems"])
    module.unlink()
    code, report = _doctor(project, capsys)
    assert code == 1
    assert any("auto-handoff mod is not in" in p for p in report["problems"])


def test_the_hook_is_timed_on_a_payload_that_needs_no_wait(tmp_path: Path) -> None:
    # The probe's transcript holds the response that made its call, so the hook's read of
    # it (the one reader's rule) finds it at once instead of waiting its bound.
    from ctxrelay.claude.setup import probe
    from ctxrelay.transcripts import call_response

    path = tmp_path / "transcript.jsonl"
    path.write_text(probe._call_response("toolu_probe"))
    assert call_response(str(path), "toolu_probe", wait_s=0) == (
        9_105,
        "claude-sonnet-4-5",
        "msg_ctxrelay_probe",
    )
