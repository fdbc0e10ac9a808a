"""Install and uninstall of the OpenCode plugin through the core's machinery: the plugin
with the command filled in, the offline stub only where the folder has none, the user's
files untouched, and the folder as found afterwards (byte for byte)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.errors import ConfigError
from ctxrelay.opencode.host import OPENCODE
from ctxrelay.opencode.setup.doctor import installed
from ctxrelay.opencode.setup.install import PLUGIN_PATH, config_dir, install, uninstall

COMMAND = "/opt/env/bin/python -I -m ctxrelay.opencode.hook"


def _tree(root: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(root)): None if p.is_dir() else p.read_bytes()
        for p in sorted(root.rglob("*"))
    }


def test_a_project_install_writes_the_plugin_and_the_stub_and_uninstall_takes_them(
    tmp_path: Path,
) -> None:
    (tmp_path / "opencode.json").write_text('{"model": "x/y"}\n')
    found = _tree(tmp_path)
    result = install("project", tmp_path, COMMAND, "1.18.33")
    folder = tmp_path / ".opencode"
    assert result.changed
    assert len(result.changes) == 3  # the plugin, the stub, session_history
    assert json.loads((folder / "opencode.json").read_text())["mcp"]["ctxrelay"]["command"][
        -2:
    ] == [
        "opencode",
        "mcp",
    ]
    assert json.loads((folder / "package.json").read_text()) == {
        "dependencies": {"@opencode-ai/plugin": "1.18.33"}
    }
    lock = json.loads((folder / "package-lock.json").read_text())
    assert lock["packages"][""]["dependencies"] == {"@opencode-ai/plugin": "1.18.33"}
    assert (folder / "node_modules").is_dir()
    plugin = installed("project", tmp_path)
    assert plugin is not None
    assert plugin.hook == ["/opt/env/bin/python", "-I", "-m", "ctxrelay.opencode.hook"]
    assert plugin.events == sorted(OPENCODE.handlers)
    again = install("project", tmp_path, COMMAND, "1.18.33")
    assert not again.changed  # installing again changes nothing
    (folder / ".gitignore").write_text("node_modules\npackage.json\n")  # OpenCode's, at start
    taken = uninstall("project", tmp_path)
    assert taken.changed
    assert _tree(tmp_path) == found


def test_a_folder_with_its_own_packages_keeps_them(tmp_path: Path) -> None:
    folder = config_dir("project", tmp_path)
    (folder / "node_modules" / "left-pad").mkdir(parents=True)
    (folder / "package.json").write_text('{"dependencies": {"left-pad": "1"}}')
    (folder / "plugin").mkdir()
    (folder / "plugin" / "mine.ts").write_text("export const Mine = async () => ({})\n")
    found = _tree(tmp_path)
    result = install("project", tmp_path, COMMAND, "1.18.33")
    assert result.changes[0] == f"wrote the plugin {folder / PLUGIN_PATH}"
    assert not any("stub" in c or "package.json" in c for c in result.changes)
    uninstall("project", tmp_path)
    assert _tree(tmp_path) == found


def test_session_history_joins_the_users_own_servers_and_leaves_them_as_found(
    tmp_path: Path,
) -> None:
    folder = config_dir("project", tmp_path)
    folder.mkdir()
    mine = '{\n  "mcp": {"mine": {"type": "local", "command": ["my-server"]}}\n}\n'
    (folder / "opencode.json").write_text(mine)
    found = _tree(tmp_path)
    install("project", tmp_path, COMMAND, "1.18.33")
    servers = json.loads((folder / "opencode.json").read_text())["mcp"]
    assert set(servers) == {"mine", "ctxrelay"}
    uninstall("project", tmp_path)
    assert _tree(tmp_path) == found  # the user's bytes, not a rewrite of them


def test_another_command_replaces_the_plugin_and_an_edited_one_stays(tmp_path: Path) -> None:
    install("project", tmp_path, COMMAND, "1.18.33")
    install("project", tmp_path, "/other/python -I -m ctxrelay.opencode.hook", "1.18.33")
    plugin = installed("project", tmp_path)
    assert plugin is not None
    assert plugin.hook[0] == "/other/python"
    path = tmp_path / ".opencode" / PLUGIN_PATH
    path.write_text(path.read_text() + "// mine now\n")
    taken = uninstall("project", tmp_path)
    assert path.is_file()
    assert any("changed since install" in note for note in taken.notes)


def test_a_plugin_file_of_the_users_by_that_name_is_refused(tmp_path: Path) -> None:
    path = tmp_path / ".opencode" / PLUGIN_PATH
    path.parent.mkdir(parents=True)
    path.write_text("export const Other = async () => ({})\n")
    with pytest.raises(ConfigError, match="not ctxrelay's"):
        install("project", tmp_path, COMMAND, "1.18.33")
    assert path.read_text() == "export const Other = async () => ({})\n"


def test_the_user_folder_follows_xdg_config_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert config_dir("user", tmp_path / "project") == tmp_path / "config" / "opencode"
    install("user", tmp_path / "project", COMMAND, "1.18.33")
    assert (tmp_path / "config" / "opencode" / PLUGIN_PATH).is_file()
    uninstall("user", tmp_path / "project")
    assert not (tmp_path / "config" / "opencode").exists()
