"""What ``ctxrelay codex install`` writes into ``hooks.json`` and how uninstall takes it
out again, without Codex (trust is the e2e tests' part: ``tests/e2e/test_codex_install.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from ctxrelay.budget.bounds import PRINT_BIG_BYTES
from ctxrelay.codex.setup.appserver import HookEntry
from ctxrelay.codex.setup.install import (
    EVENTS,
    choose_command,
    hooks_config,
    install,
    install_hooks,
    stale_trust_edits,
    uninstall,
    uninstall_hooks,
)
from ctxrelay.codex.setup.launcher import hook_candidates, is_ours
from ctxrelay.codex.setup.probe import sample_payload
from ctxrelay.errors import ConfigError
from ctxrelay.hooks.install.manifest import MANIFEST_NAME
from tests.hooks.install._launchers import older_layout

MINE = """{"hooks": {"PreToolUse": [
  {"matcher": "Bash", "hooks": [{"type": "command", "command": "mine"}]}
]}}
"""


def test_the_chosen_command_is_this_environments_and_works_for_every_event() -> None:
    command = choose_command()
    assert command in hook_candidates()
    assert is_ours(command)


def test_a_command_that_does_not_work_is_refused_before_anything_is_written() -> None:
    with pytest.raises(ConfigError, match="does not work"):
        choose_command("/bin/true")


def test_a_hook_without_the_parser_is_refused_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxrelay.codex.setup import launcher
    from ctxrelay.hooks.install.probe import NO_PARSER
    from tests.hooks.install._launchers import PYTHON, without_parser

    half = without_parser("ctxrelay.codex.hook")
    monkeypatch.setattr(launcher, "hook_candidates", lambda: [half])
    with pytest.raises(ConfigError, match="works only in part, nothing was written") as raised:
        choose_command()
    assert NO_PARSER in str(raised.value)
    assert f"{PYTHON} -m pip install" in str(raised.value)
    with pytest.raises(ConfigError, match="does not work") as raised:
        choose_command(half)
    assert NO_PARSER in str(raised.value)


@pytest.mark.parametrize("bash", ["cd sub && cat big.txt", 'cat "big.txt"'])
def test_the_chosen_command_denies_what_only_the_parser_can_judge(
    tmp_path: Path, bash: str
) -> None:
    # Through the shell, as Codex starts it: the hook imports this environment's parser.
    big = "".join(f"line {i:05d}\n" for i in range(2 * PRINT_BIG_BYTES // 10))
    (tmp_path / "sub").mkdir()
    for path in (tmp_path / "big.txt", tmp_path / "sub" / "big.txt"):
        path.write_text(big)
    done = subprocess.run(
        ["/bin/sh", "-c", choose_command()],
        input=json.dumps(sample_payload("PreToolUse", tmp_path, bash)),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=dict(os.environ, CTXRELAY_STATE_DIR=str(tmp_path / "state")),
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_our_groups_are_appended_so_the_users_hooks_keep_their_place(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    path.write_text(MINE)
    result = install(path, "python -m ctxrelay.codex.hook")
    assert result.changed
    data = json.loads(path.read_text())
    assert data["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "mine"
    for event, groups in hooks_config("python -m ctxrelay.codex.hook").items():
        assert data["hooks"][event][-1] == groups[0]
    assert set(EVENTS) <= set(data["hooks"])
    # Again, and with another command: replaced, never doubled.
    assert not install(path, "python -m ctxrelay.codex.hook").changed
    install(path, "/other/python -m ctxrelay.codex.hook")
    data = json.loads(path.read_text())
    assert len(data["hooks"]["PreToolUse"]) == 2
    assert "/other/python" in data["hooks"]["PreToolUse"][1]["hooks"][0]["command"]
    uninstall(path)
    assert path.read_text() == MINE  # the bytes it found
    assert not (tmp_path / MANIFEST_NAME).exists()


def test_a_file_changed_since_install_keeps_the_change(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    install(path, "python -m ctxrelay.codex.hook")
    data = json.loads(path.read_text())
    data["hooks"]["Stop"] = [{"hooks": [{"type": "command", "command": "mine"}]}]
    path.write_text(json.dumps(data))
    result = uninstall(path)
    assert result.notes
    assert json.loads(path.read_text()) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}
    }


def test_a_project_layer_install_created_goes_entirely(tmp_path: Path) -> None:
    path = tmp_path / "project" / ".codex" / "hooks.json"
    (tmp_path / "project").mkdir()
    install(path, "python -m ctxrelay.codex.hook")
    assert path.exists()
    uninstall(path)
    assert not path.parent.exists()


@pytest.mark.parametrize("text", ["{not json", "[]", '{"hooks": {"Stop": {}}}'])
def test_a_file_that_is_not_a_hooks_file_is_refused_unchanged(tmp_path: Path, text: str) -> None:
    path = tmp_path / "hooks.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match="nothing was changed"):
        install(path, "python -m ctxrelay.codex.hook")
    assert path.read_text() == text
    assert not (tmp_path / MANIFEST_NAME).exists()


def _as_version_1(path: Path, found: str | None, command: str) -> None:
    """What the version before the core's manifest recorded beside ``hooks.json``."""
    manifest = {
        "found": {"text": found, "dir_existed": True},
        "written": path.read_text(),
        "command": command,
        "version": 1,
        "config_existed": True,
    }
    path.with_name(MANIFEST_NAME).write_text(json.dumps(manifest))


def _ours_per_event(path: Path) -> dict[str, list[str]]:
    hooks = json.loads(path.read_text())["hooks"]
    return {
        event: [h["command"] for g in groups for h in g["hooks"] if is_ours(h["command"])]
        for event, groups in hooks.items()
    }


def test_an_install_of_the_older_layout_is_replaced_and_uninstall_gives_back_the_bytes(
    tmp_path: Path,
) -> None:
    # The previous version wrote `python -I -S -c '...'` hooks and its own manifest:
    # install replaces each of them (one group an event, the new command), and uninstall
    # still gives back the very bytes that version found.
    path = tmp_path / "hooks.json"
    path.write_text(MINE)
    old = older_layout("ctxrelay.codex.hook")
    install(path, old)
    (tmp_path / MANIFEST_NAME).unlink()
    for backup in tmp_path.glob("hooks.json.ctxrelay-backup-*"):
        backup.unlink()  # that version kept no backup
    _as_version_1(path, MINE, old)
    (new,) = hook_candidates()
    result = install(path, new)
    assert result.changed
    assert _ours_per_event(path) == {event: [new] for event in EVENTS}
    assert json.loads(path.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "mine"
    assert not uninstall(path).notes
    assert path.read_text() == MINE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hooks.json"]


def test_hooks_of_ctxrelay_without_a_manifest_are_replaced_never_doubled(tmp_path: Path) -> None:
    path = tmp_path / "hooks.json"
    old = older_layout("ctxrelay.codex.hook")
    data = json.loads(MINE)
    for event, groups in hooks_config(old).items():
        data["hooks"].setdefault(event, []).extend(groups)
    path.write_text(json.dumps(data))
    (new,) = hook_candidates()
    install(path, new)
    assert _ours_per_event(path) == {event: [new] for event in EVENTS}
    install(path, new)  # again: nothing doubled
    assert _ours_per_event(path) == {event: [new] for event in EVENTS}
    uninstall(path)
    assert json.loads(path.read_text()) == json.loads(MINE)


def test_a_config_toml_only_install_made_goes_with_uninstall(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    result = install_hooks("user", project, home, "python -m ctxrelay.codex.hook", None)
    assert result.trust is not None
    assert result.trust.problem == "the Codex CLI was not found"
    (home / "config.toml").write_text("\n")  # what Codex's trust leaves once emptied
    uninstall_hooks("user", project, home, None)
    assert not home.exists()


def test_session_history_is_registered_with_approval_and_taken_out_byte_for_byte(
    tmp_path: Path,
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    home.mkdir()
    mine = b'model = "gpt-5.5"\n# mine, no newline at the end'
    (home / "config.toml").write_bytes(mine)
    (home / "config.toml").chmod(0o640)
    result = install_hooks("user", project, home, "python -m ctxrelay.codex.hook", None)
    server = tomllib.loads((home / "config.toml").read_text())["mcp_servers"]["ctxrelay"]
    assert server["default_tools_approval_mode"] == "approve"  # no prompt stops codex exec
    assert server["args"][-2:] == ["codex", "mcp"]
    assert any("[mcp_servers.ctxrelay]" in note for note in result.notes)
    assert (home / "config.toml").stat().st_mode & 0o777 == 0o640
    uninstall_hooks("user", project, home, None)
    assert (home / "config.toml").read_bytes() == mine
    # A table of the user's own of that name is theirs: install adds nothing to it.
    own = b'[mcp_servers.ctxrelay]\ncommand = "my-server"\n'
    (home / "config.toml").write_bytes(own)
    install_hooks("user", project, home, "python -m ctxrelay.codex.hook", None)
    assert (home / "config.toml").read_bytes() == own
    uninstall_hooks("user", project, home, None)
    assert (home / "config.toml").read_bytes() == own


def test_stale_trust_records_go_and_a_moved_hook_keeps_its_own() -> None:
    path = Path("/h/hooks.json")

    def hook(key: str, command: str, hashed: str, trust: str) -> HookEntry:
        return HookEntry(f"{path}:{key}", "sessionStart", command, str(path), "user", hashed, trust)

    ours = "/venv/bin/python -I -m ctxrelay.codex.hook"
    other = "/p/.codex/hooks.json"
    listing = [
        hook("session_start:0:0", ours, "sha256:ours", "modified"),
        hook("session_start:1:0", "echo later", "sha256:later", "modified"),
        hook("stop:0:0", "echo edited", "sha256:edited", "modified"),
        HookEntry(f"{other}:stop:0:0", "stop", "x", other, "project", "h", "trusted"),
    ]
    records = {
        f"{path}:session_start:0:0": "sha256:first",  # the user's hook, gone
        f"{path}:session_start:1:0": "sha256:ours",  # ctxrelay's, moved up
        f"{path}:session_start:2:0": "sha256:later",  # the user's, moved up
        f"{path}:stop:0:0": "sha256:before-the-edit",  # the user changed it: theirs to review
        "/p/.codex/hooks.json:stop:0:0": "h2",  # another layer's
    }
    edits = stale_trust_edits(listing, records, path)
    removed = {e["keyPath"] for e in edits if e["value"] is None}
    assert removed == {
        f'hooks.state."{path}:session_start:0:0"',
        f'hooks.state."{path}:session_start:2:0"',
    }
    (moved,) = [e["value"] for e in edits if e["value"] is not None]
    assert moved == {f"{path}:session_start:1:0": {"trusted_hash": "sha256:later"}}
    # Records of the hooks there, nothing stale: nothing to do.
    assert stale_trust_edits(listing[1:2], {listing[1].key: "sha256:later"}, path) == []
