"""``ctxrelay claude install | uninstall | doctor`` on real files in a temp project."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxrelay.claude._snippet import HOOK_COMMAND, snippet
from ctxrelay.claude.install import MANIFEST_NAME, merge_settings, unmerge_settings
from ctxrelay.cli import main as cli_main
from ctxrelay.cli.claude import main

USER_SETTINGS: dict[str, Any] = {
    "model": "opus",
    "env": {"FOO": "1", "BASH_MAX_OUTPUT_LENGTH": "9000"},
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "my-stop-hook"}]}]},
    "permissions": {"allow": ["Bash(git *)"]},
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "project"
    (root / ".claude").mkdir(parents=True)
    return root


def settings_of(project: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project / ".claude" / "settings.json").read_text())
    return data


def write_settings(project: Path, data: dict[str, Any]) -> None:
    (project / ".claude" / "settings.json").write_text(json.dumps(data, indent=4))


def test_install_merges_keeps_a_backup_and_is_idempotent(project: Path) -> None:
    write_settings(project, USER_SETTINGS)
    assert main(["install", "--project-dir", str(project)]) == 0
    merged = settings_of(project)
    assert merged["env"] == {"FOO": "1", "BASH_MAX_OUTPUT_LENGTH": "4000", "DISABLE_COMPACT": "1"}
    assert merged["model"] == "opus"
    assert merged["permissions"] == USER_SETTINGS["permissions"]
    assert merged["hooks"]["Stop"][0] == USER_SETTINGS["hooks"]["Stop"][0]
    for event, groups in snippet()["hooks"].items():
        assert groups[0] in merged["hooks"][event]
    backups = list((project / ".claude").glob("settings.json.ctxrelay-backup-*"))
    assert len(backups) == 1
    assert json.loads(backups[0].read_text()) == USER_SETTINGS
    assert (project / ".claude" / "agents" / "investigator.md").is_file()

    assert main(["install", "--project-dir", str(project)]) == 0
    assert settings_of(project) == merged  # nothing doubled
    assert len(list((project / ".claude").glob("settings.json.ctxrelay-backup-*"))) == 1


def test_uninstall_removes_exactly_what_install_added(project: Path) -> None:
    write_settings(project, USER_SETTINGS)
    (project / ".claude" / "agents").mkdir()
    (project / ".claude" / "agents" / "reviewer.md").write_text("my own reviewer\n")
    assert main(["install", "--project-dir", str(project)]) == 0
    assert (project / ".claude" / "agents" / "reviewer.md").read_text() == "my own reviewer\n"
    assert main(["uninstall", "--project-dir", str(project)]) == 0
    assert settings_of(project) == USER_SETTINGS
    left = sorted(p.name for p in (project / ".claude" / "agents").iterdir())
    assert left == ["reviewer.md"]
    assert not (project / ".claude" / MANIFEST_NAME).exists()


def test_install_into_a_new_project_then_uninstall_leaves_no_settings_keys(
    project: Path,
) -> None:
    assert main(["install", "--project-dir", str(project)]) == 0
    assert settings_of(project) == snippet()
    assert main(["uninstall", "--project-dir", str(project)]) == 0
    assert settings_of(project) == {}
    assert not (project / ".claude" / "agents").exists()


def test_a_value_changed_after_install_survives_uninstall(project: Path) -> None:
    assert main(["install", "--project-dir", str(project)]) == 0
    data = settings_of(project)
    data["env"]["BASH_MAX_OUTPUT_LENGTH"] = "12000"
    write_settings(project, data)
    assert main(["uninstall", "--project-dir", str(project)]) == 0
    assert settings_of(project) == {"env": {"BASH_MAX_OUTPUT_LENGTH": "12000"}}


@pytest.mark.parametrize("text", ["{bad json", "[1, 2]", '{"hooks": [1]}', '{"env": 3}'])
def test_a_settings_file_it_cannot_parse_is_left_untouched(
    project: Path, text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = project / ".claude" / "settings.json"
    path.write_text(text)
    assert main(["install", "--project-dir", str(project)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "nothing was changed" in err or "is not" in err
    assert path.read_text() == text
    assert list(path.parent.iterdir()) == [path]


def test_user_scope_writes_the_users_settings(project: Path, tmp_path: Path) -> None:
    assert cli_main(["claude", "install", "--user", "--json"]) == 0
    home_settings = tmp_path / "home" / ".claude" / "settings.json"
    assert json.loads(home_settings.read_text()) == snippet()
    assert not (project / ".claude" / "settings.json").exists()


def test_uninstall_without_a_record_removes_what_equals_the_snippet(project: Path) -> None:
    write_settings(project, snippet())  # e.g. pasted by hand, or copied from elsewhere
    assert main(["uninstall", "--project-dir", str(project)]) == 0
    assert settings_of(project) == {}


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)
_settings = st.fixed_dictionaries(
    {},
    optional={
        "env": st.dictionaries(
            st.sampled_from(["FOO", "DISABLE_COMPACT", "BASH_MAX_OUTPUT_LENGTH"]), st.text()
        ),
        "hooks": st.dictionaries(
            st.sampled_from(["Stop", "PreToolUse", "Notification"]),
            st.lists(st.sampled_from([snippet()["hooks"]["Stop"][0], {"hooks": []}])),
        ),
        "model": _json,
        "statusLine": _json,
    },
)


@settings(max_examples=200, deadline=None)
@given(_settings)
def test_merge_then_unmerge_is_the_identity(current: dict[str, Any]) -> None:
    add = {**snippet(), "statusLine": {"type": "command", "command": "ctxrelay claude statusline"}}
    merged, record = merge_settings(current, add)
    assert merge_settings(merged, add)[0] == merged
    assert unmerge_settings(merged, add, record) == current


def test_doctor_reports_the_hook_and_the_cli(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import sys

    bin_dir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", ""))
    assert main(["install", "--project-dir", str(project)]) == 0
    capsys.readouterr()
    code = main(["doctor", "--project-dir", str(project), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert report["hook_command"].endswith(HOOK_COMMAND)
    assert report["hook_exit"] == 0
    assert report["fails_open"] is True
    assert report["hook_ms"] > 0
    assert report["installed"]["project"]["hooks"] == len(snippet()["hooks"])
    if report["claude_version"] is not None:
        assert code == 0


@pytest.mark.parametrize("flag", ["--project-dir", "--dir"])
def test_the_project_is_named_like_every_other_subcommand(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str
) -> None:
    # --project-dir, as in config, run and handoff; --dir (its first name) still works.
    monkeypatch.chdir(tmp_path)
    assert main(["install", flag, str(project)]) == 0
    assert HOOK_COMMAND in json.dumps(settings_of(project)["hooks"])
    assert not (tmp_path / ".claude").exists()  # not the current directory
    assert main(["uninstall", flag, str(project)]) == 0
    assert "hooks" not in settings_of(project)
