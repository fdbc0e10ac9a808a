"""``ctxrelay claude install | uninstall | doctor`` on real files in a temp project."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.claude.extras.mcp import MODEL_TOOL_NAME, SERVER_NAME
from ctxrelay.claude.setup._snippet import HOOK_COMMAND, snippet
from ctxrelay.claude.setup.install import BARE, Commands, install, settings_path
from ctxrelay.cli import main as cli_main
from ctxrelay.cli.claude import main
from ctxrelay.hooks.install.manifest import MANIFEST_NAME
from tests.hooks.install._launchers import older_layout, through_shell

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


def installed_snippet(project: Path) -> dict[str, Any]:
    """The snippet install merged (its commands are this environment's)."""
    manifest: dict[str, Any] = json.loads((project / ".claude" / MANIFEST_NAME).read_text())
    recorded: dict[str, Any] = manifest["merged"][str(project / ".claude" / "settings.json")][
        "snippet"
    ]
    assert recorded == Commands(**manifest["commands"]).snippet()
    return recorded


def write_settings(project: Path, data: dict[str, Any]) -> None:
    (project / ".claude" / "settings.json").write_text(json.dumps(data, indent=4))


def test_install_merges_keeps_a_backup_and_is_idempotent(project: Path) -> None:
    write_settings(project, USER_SETTINGS)
    assert main(["install", "--project-dir", str(project)]) == 0
    merged = settings_of(project)
    assert merged["env"] == {
        "FOO": "1",
        "BASH_MAX_OUTPUT_LENGTH": "4000",
        "DISABLE_AUTO_COMPACT": "1",
    }
    assert merged["model"] == "opus"
    assert merged["permissions"] == {"allow": ["Bash(git *)", MODEL_TOOL_NAME]}
    assert merged["hooks"]["Stop"][0] == USER_SETTINGS["hooks"]["Stop"][0]
    for event, groups in installed_snippet(project)["hooks"].items():
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
    assert settings_of(project) == installed_snippet(project)
    assert (project / ".mcp.json").is_file()
    assert main(["uninstall", "--project-dir", str(project)]) == 0
    # The files install created are gone; .claude/ was there before, and stays.
    assert sorted(project.rglob("*")) == [project / ".claude"]


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
    assert json.loads(home_settings.read_text()) == installed_snippet(tmp_path / "home")
    assert not (project / ".claude" / "settings.json").exists()


def test_uninstall_without_a_record_removes_what_equals_the_snippet(project: Path) -> None:
    write_settings(project, snippet())  # e.g. pasted by hand, or copied from elsewhere
    assert main(["uninstall", "--project-dir", str(project)]) == 0
    assert settings_of(project) == {}


@pytest.mark.parametrize("flag", ["--project-dir", "--dir"])
def test_the_project_is_named_like_every_other_subcommand(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str
) -> None:
    # --project-dir, as in config, run and handoff; --dir (its first name) still works.
    monkeypatch.chdir(tmp_path)
    assert main(["install", flag, str(project)]) == 0
    assert settings_of(project)["hooks"] == installed_snippet(project)["hooks"]
    assert not (tmp_path / ".claude").exists()  # not the current directory
    assert main(["uninstall", flag, str(project)]) == 0
    assert not (project / ".claude" / "settings.json").exists()


# -- the commands install writes -------------------------------------------------------


def _run_hook(
    command: str, cwd: Path, env: dict[str, str], bash: str = "cat big.txt"
) -> subprocess.CompletedProcess[str]:
    """``command`` as Claude Code starts a hook: through the shell, a ``PreToolUse`` for
    the Bash command ``bash`` on stdin (``big.txt`` is big, in ``cwd`` and in ``sub/``:
    23 KB, which Claude Code's default cap would hand the model whole)."""
    big = "".join(f"line {i:05d} of the file\n" for i in range(1000))
    (cwd / "big.txt").write_text(big)
    (cwd / "sub").mkdir(exist_ok=True)
    (cwd / "sub" / "big.txt").write_text(big)
    payload = {
        "session_id": "s-install",
        "transcript_path": str(cwd / "t.jsonl"),
        "cwd": str(cwd),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": bash},
        "tool_use_id": "toolu_1",
    }
    return through_shell(command, payload, cwd, env)


def test_the_installed_commands_run_without_this_environment_on_path(
    project: Path, tmp_path: Path
) -> None:
    assert main(["install", "--project-dir", str(project)]) == 0
    manifest = json.loads((project / ".claude" / MANIFEST_NAME).read_text())
    hook, ctxrelay = manifest["commands"]["hook"], manifest["commands"]["ctxrelay"]
    for command in (hook, ctxrelay):
        assert Path(shlex.split(command)[0]).is_absolute()
    groups = [g for event in settings_of(project)["hooks"].values() for g in event]
    assert {h["command"] for g in groups for h in g["hooks"]} == {hook}
    assert settings_of(project)["statusLine"]["command"] == f"{ctxrelay} claude statusline"
    # A PATH that has no ctxrelay at all, as Claude Code's may well be.
    bare = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CTXRELAY_STATE_DIR": str(tmp_path)}
    assert shutil.which("ctxrelay-hook", path=bare["PATH"]) is None
    done = _run_hook(hook, project, bare)
    assert (done.returncode, done.stderr) == (0, "")
    decision = json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"]
    assert decision == "deny"


def test_the_hook_starts_as_every_python_tool_starts(project: Path) -> None:
    # This environment's console script by absolute path (else python -I -m): site, and
    # so site-packages with the guard's parser, is never left out (no -S), and sys.path
    # is never built by hand.
    assert main(["install", "--project-dir", str(project)]) == 0
    hook = json.loads((project / ".claude" / MANIFEST_NAME).read_text())["commands"]["hook"]
    script = Path(sys.executable).parent / "ctxrelay-hook"
    python = os.path.abspath(sys.executable)
    assert shlex.split(hook) in ([str(script)], [python, "-I", "-m", "ctxrelay.claude.hook"])
    if script.is_file():
        assert shlex.split(hook) == [str(script)]  # the console script comes first
    assert "-S" not in shlex.split(hook)
    assert "sys.path" not in hook


@pytest.mark.parametrize(
    "bash", ["cd sub && cat big.txt", 'cat "big.txt"', "cat big.txt; echo done"]
)
def test_the_installed_hook_denies_what_only_the_parser_can_judge(
    project: Path, tmp_path: Path, bash: str
) -> None:
    # The hook must import this environment's tree-sitter: a start that leaves
    # site-packages out (-S) denies `cat big.txt` and lets these print the whole file.
    assert main(["install", "--project-dir", str(project)]) == 0
    hook = json.loads((project / ".claude" / MANIFEST_NAME).read_text())["commands"]["hook"]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CTXRELAY_STATE_DIR": str(tmp_path)}
    done = _run_hook(hook, project, env, bash)
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_hook_without_the_parser_is_refused_loudly_and_nothing_is_written(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxrelay.claude.setup import launcher
    from ctxrelay.hooks.install.probe import NO_PARSER
    from tests.hooks.install._launchers import without_parser

    half = without_parser("ctxrelay.claude.hook")
    monkeypatch.setattr(launcher, "hook_candidates", lambda: [half])
    assert main(["install", "--project-dir", str(project)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "works only in part, nothing was written" in err
    assert NO_PARSER in err
    assert f"{os.path.abspath(sys.executable)} -m pip install" in err
    assert not (project / ".claude" / "settings.json").exists()
    # Given with --command, the same check refuses it.
    assert main(["install", "--project-dir", str(project), "--command", half]) == 1
    assert NO_PARSER in capsys.readouterr().err
    assert not (project / ".claude" / "settings.json").exists()


def test_a_hook_command_that_does_not_work_fails_install_in_one_sentence(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_settings(project, USER_SETTINGS)
    before = (project / ".claude" / "settings.json").read_text()
    missing = str(project / "no-such-venv" / "bin" / "ctxrelay-hook")
    assert main(["install", "--project-dir", str(project), "--command", missing]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"ctxrelay: error: the hook command {missing!r} does not work")
    assert (project / ".claude" / "settings.json").read_text() == before
    assert not (project / ".claude" / MANIFEST_NAME).exists()


def test_no_working_launcher_in_this_environment_fails_install(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxrelay.claude.setup import launcher

    broken = str(project / "gone" / "python")
    monkeypatch.setattr(launcher, "hook_candidates", lambda: [f"{broken} -m ctxrelay.claude.hook"])
    assert main(["install", "--project-dir", str(project)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "this environment cannot run ctxrelay's hook" in err
    assert "--command" in err
    assert not (project / ".claude" / "settings.json").exists()


def test_a_command_of_yours_is_written_as_given(project: Path) -> None:
    script = str(Path(sys.executable).parent / "ctxrelay-hook")
    assert main(["install", "--project-dir", str(project), "--command", script]) == 0
    hooks = settings_of(project)["hooks"]
    assert {h["command"] for event in hooks.values() for g in event for h in g["hooks"]} == {script}


def test_installing_from_another_environment_replaces_the_commands_never_doubles_them(
    project: Path,
) -> None:
    write_settings(project, USER_SETTINGS)
    script = str(Path(sys.executable).parent / "ctxrelay-hook")
    assert main(["install", "--project-dir", str(project), "--command", script]) == 0
    assert main(["install", "--project-dir", str(project)]) == 0
    now = installed_snippet(project)
    for event, groups in settings_of(project)["hooks"].items():
        ours = [g for g in groups if "ctxrelay" in json.dumps(g)]
        assert ours == now["hooks"].get(event, []), event
    assert main(["uninstall", "--project-dir", str(project)]) == 0
    assert settings_of(project) == USER_SETTINGS


def _as_version_1(project: Path, *, snippet_recorded: bool = True) -> None:
    """The manifest as the version before the core's format wrote it: the settings'
    record, its backup and what it created at the top, ``.mcp.json``'s own record (and,
    before that, no snippet and no commands recorded)."""
    path = project / ".claude" / MANIFEST_NAME
    now = json.loads(path.read_text())
    settings = str(project / ".claude" / "settings.json")
    entry = now["merged"].pop(settings)
    old: dict[str, Any] = {
        "version": 1,
        "created": {"settings": entry["created"], "dir": entry["dir_created"]},
        "settings": entry["record"],
        "files": now["files"],
    }
    if entry["backup"]:
        old["backup"] = entry["backup"]
    if snippet_recorded:
        old |= {"snippet": entry["snippet"], "commands": now["commands"]}
    for where, mcp in now["merged"].items():
        old["mcp_json"] = {
            "created": mcp["created"],
            "text": mcp["text"],
            "previous": mcp["record"]["mcpServers"]["previous"][SERVER_NAME],
            "path": where,
            "entry": mcp["snippet"]["mcpServers"][SERVER_NAME],
        }
    path.write_text(json.dumps(old))


def test_an_install_by_an_older_version_with_bare_commands_is_upgraded(project: Path) -> None:
    # Before commands were absolute, install wrote `ctxrelay-hook` and recorded no
    # snippet: a new install replaces those groups, and uninstall still restores all.
    write_settings(project, USER_SETTINGS)
    settings = settings_path("project", project, project.parent / "home")
    install(settings, BARE, mcp_json=project / ".mcp.json")
    _as_version_1(project, snippet_recorded=False)
    assert f'"{HOOK_COMMAND}"' in json.dumps(settings_of(project))
    assert main(["install", "--project-dir", str(project)]) == 0
    assert f'"{HOOK_COMMAND}"' not in json.dumps(settings_of(project))
    assert settings_of(project)["hooks"]["Stop"] == [
        USER_SETTINGS["hooks"]["Stop"][0],
        *installed_snippet(project)["hooks"]["Stop"],
    ]
    skill = project / ".claude" / "skills" / "ctxrelay-handoff" / "SKILL.md"
    assert "!`ctxrelay claude handoff" not in skill.read_text()  # the copy was updated too
    assert main(["uninstall", "--project-dir", str(project)]) == 0
    assert settings_of(project) == USER_SETTINGS
    assert not (project / ".mcp.json").exists()
    assert sorted(p.name for p in (project / ".claude").iterdir()) == ["settings.json"]
    assert BARE.snippet() == {
        **snippet(),
        "enabledMcpjsonServers": [SERVER_NAME],
        "permissions": {"allow": [MODEL_TOOL_NAME]},
    }


def test_an_install_of_the_older_layout_is_replaced_never_doubled(project: Path) -> None:
    # The previous version wrote `python -I -S -c '...'` hooks (and its own manifest):
    # install replaces every one of them, and uninstall gives back the user's bytes.
    path = project / ".claude" / "settings.json"
    text = json.dumps(USER_SETTINGS, indent=3)
    path.write_text(text)
    old = Commands(older_layout("ctxrelay.claude.hook"), "ctxrelay")
    settings = settings_path("project", project, project.parent / "home")
    install(settings, old, mcp_json=project / ".mcp.json")
    _as_version_1(project)
    assert main(["install", "--project-dir", str(project)]) == 0
    hooks = settings_of(project)["hooks"]
    commands = [h["command"] for groups in hooks.values() for g in groups for h in g["hooks"]]
    assert not [c for c in commands if "-S" in shlex.split(c)]
    now = installed_snippet(project)
    for event, groups in hooks.items():
        ours = [g for g in groups if "ctxrelay" in json.dumps(g)]
        assert ours == now["hooks"].get(event, []), event  # one group an event, the new one
    assert main(["uninstall", "--project-dir", str(project)]) == 0
    assert path.read_text() == text
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


def test_hooks_of_ctxrelay_without_a_record_are_replaced_and_removed(project: Path) -> None:
    # No manifest (lost, or settings copied from another project), and ctxrelay's hooks
    # in two forms, the older layout's and a pasted snippet's: one of each event after
    # install, none after uninstall, and the user's own hook stays.
    old = Commands(older_layout("ctxrelay.claude.hook"), "ctxrelay").snippet()
    data = {
        **USER_SETTINGS,
        "hooks": {
            **old["hooks"],
            "Stop": [
                *USER_SETTINGS["hooks"]["Stop"],
                *old["hooks"]["Stop"],
                *snippet()["hooks"]["Stop"],
            ],
        },
    }
    write_settings(project, data)
    assert main(["install", "--project-dir", str(project)]) == 0
    now = installed_snippet(project)
    for event, groups in settings_of(project)["hooks"].items():
        ours = [g for g in groups if "ctxrelay" in json.dumps(g)]
        assert ours == now["hooks"].get(event, []), event
    assert settings_of(project)["hooks"]["Stop"][0] == USER_SETTINGS["hooks"]["Stop"][0]
    assert main(["uninstall", "--project-dir", str(project)]) == 0
    assert settings_of(project)["hooks"] == USER_SETTINGS["hooks"]


# -- leaving the project as found, and saying what changed ----------------------------


def test_a_project_without_claude_settings_is_left_without_them(tmp_path: Path) -> None:
    root = tmp_path / "bare"
    root.mkdir()
    (root / "main.py").write_text("print(1)\n")
    assert main(["install", "--project-dir", str(root)]) == 0
    assert (root / ".claude" / "settings.json").is_file()
    assert main(["uninstall", "--project-dir", str(root)]) == 0
    assert sorted(p.name for p in root.rglob("*")) == ["main.py"]


def test_two_cycles_leave_the_users_file_byte_for_byte_and_no_backup(project: Path) -> None:
    path = project / ".claude" / "settings.json"
    # the user's own formatting: compact arrays, two-space objects, no final newline
    text = '{\n  "model": "opus",\n  "permissions": {"allow": ["Bash(git *)", "Read"]}\n}'
    path.write_text(text)
    mcp = project / ".mcp.json"
    mcp_text = '{"mcpServers": {"db": {"command": "db-mcp", "args": ["--ro"]}}}'
    mcp.write_text(mcp_text)
    for _ in range(2):
        assert main(["install", "--project-dir", str(project)]) == 0
        servers = json.loads(mcp.read_text())["mcpServers"]
        assert set(servers) == {"db", SERVER_NAME}
        assert servers[SERVER_NAME]["args"][-2:] == ["claude", "mcp"]
        assert len(list(path.parent.glob("settings.json.ctxrelay-backup-*"))) == 1
        assert main(["install", "--project-dir", str(project)]) == 0  # again: no new backup
        assert len(list(path.parent.glob("settings.json.ctxrelay-backup-*"))) == 1
        assert main(["uninstall", "--project-dir", str(project)]) == 0
        assert path.read_text() == text
        assert mcp.read_text() == mcp_text
        assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


def test_uninstall_keeps_one_backup_when_the_file_cannot_go_back_as_it_was(
    project: Path,
) -> None:
    path = project / ".claude" / "settings.json"
    write_settings(project, USER_SETTINGS)
    assert main(["install", "--project-dir", str(project)]) == 0
    data = settings_of(project)
    data["model"] = "sonnet"  # the user's change after install
    write_settings(project, data)
    assert main(["uninstall", "--project-dir", str(project)]) == 0
    assert settings_of(project) == {**USER_SETTINGS, "model": "sonnet"}
    backups = list(path.parent.glob("settings.json.ctxrelay-backup-*"))
    assert len(backups) == 1
    assert json.loads(backups[0].read_text()) == USER_SETTINGS


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """Output on one line per sentence: these tests read what is said, not its wrapping
    (tests/claude/test_output_width.py checks that)."""
    monkeypatch.setenv("COLUMNS", "1000")


@pytest.mark.usefixtures("wide")
def test_install_says_what_it_changed(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_settings(
        project,
        {
            "statusLine": {"type": "command", "command": "my-status"},
            "env": {"DISABLE_AUTO_COMPACT": "0"},
        },
    )
    assert main(["install", "--project-dir", str(project)]) == 0
    out = capsys.readouterr().out
    assert "changed: statusLine replaced (yours was my-status; uninstall restores it)" in out
    assert "changed: env DISABLE_AUTO_COMPACT set (it was '0')" in out
    assert f"changed: permissions.allow: added {MODEL_TOOL_NAME}" in out
    assert f"changed: the MCP server {SERVER_NAME} named in {project / '.mcp.json'}" in out
    assert main(["install", "--project-dir", str(project)]) == 0
    assert "changed:" not in capsys.readouterr().out  # nothing changed the second time
    assert main(["uninstall", "--project-dir", str(project)]) == 0
    assert settings_of(project)["statusLine"]["command"] == "my-status"


@pytest.mark.usefixtures("wide")
def test_a_user_install_says_how_to_register_the_mcp_server(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["claude", "install", "--user"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("to do: "))
    assert f"claude mcp add --scope user {SERVER_NAME} -- " in line
    assert line.endswith(" claude mcp")
    assert not (project / ".mcp.json").exists()


@pytest.mark.usefixtures("wide")
def test_uninstall_says_what_it_leaves_behind(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    where = ["--project-dir", str(project)]
    assert main(["install", *where]) == 0
    assert main(["config", *where, "--mode", "auto"]) == 0
    handoffs = project / ".ctxrelay" / "handoff"
    handoffs.mkdir(parents=True)
    (handoffs / "handoff-20261201T000000Z.md").write_text("# Handoff\n")
    capsys.readouterr()
    assert main(["uninstall", *where]) == 0
    out = capsys.readouterr().out
    config = project / ".ctxrelay" / "config.json"
    assert (
        f'left: {config}: the project\'s ctxrelay settings for Claude Code (--mode "auto")' in out
    )
    assert f"left: {handoffs}: 1 handoff file(s)" in out
    assert main(["uninstall", *where, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["left"]) == 2
