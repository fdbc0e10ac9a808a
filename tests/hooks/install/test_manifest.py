"""The manifest and the rules that leave a project as install found it
(``ctxrelay.hooks.install.manifest``), on real files, for any host: a file install
created goes, with the folder it created; a file back to its content gets its own bytes;
at most one backup remains; a copied file goes only while unchanged."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.errors import ConfigError
from ctxrelay.hooks.install.entries import command_hooks, runs_ours
from ctxrelay.hooks.install.manifest import MANIFEST_NAME, VERSION, Manifest
from ctxrelay.hooks.install.merge import Rule

RULES = {"hooks": Rule.LISTS}
OURS = {"hooks": runs_ours(lambda command: isinstance(command, str) and "our-hook" in command)}
MINE = '{"hooks": {"Stop": [\n  {"hooks": [{"type": "command", "command": "mine"}]}\n]}, "x": 1}'


def snippet(command: str = "our-hook") -> dict[str, Any]:
    return {"hooks": command_hooks(["Stop", "SessionStart"], command)}


def install(folder: Path, add: dict[str, Any] | None = None, backup: bool = True) -> Manifest:
    manifest = Manifest.load(folder)
    manifest.merge_file(folder / "settings.json", add or snippet(), RULES, ours=OURS, backup=backup)
    manifest.save()
    return manifest


def uninstall(folder: Path, backup: bool = True) -> Manifest:
    manifest = Manifest.load(folder)
    manifest.unmerge_file(folder / "settings.json", RULES, ours=OURS, backup=backup)
    manifest.remove_copies()
    manifest.remove()
    return manifest


def backups(folder: Path) -> list[Path]:
    return sorted(folder.glob("settings.json.ctxrelay-backup-*"))


def test_a_file_and_folder_install_created_go_again(tmp_path: Path) -> None:
    folder = tmp_path / ".host"
    install(folder)
    assert json.loads((folder / "settings.json").read_text()) == snippet()
    manifest = json.loads((folder / MANIFEST_NAME).read_text())
    assert manifest["version"] == VERSION
    assert manifest["merged"][str(folder / "settings.json")]["created"] is True
    uninstall(folder)
    assert not folder.exists()


@pytest.mark.parametrize("backup", [True, False])
def test_two_cycles_give_back_the_users_bytes_and_leave_no_backup(
    tmp_path: Path, backup: bool
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(MINE)
    for _ in range(2):
        install(tmp_path, backup=backup)
        assert len(backups(tmp_path)) == (1 if backup else 0)
        install(tmp_path, backup=backup)  # again: nothing new, no second backup
        assert len(backups(tmp_path)) == (1 if backup else 0)
        uninstall(tmp_path, backup=backup)
        assert path.read_text() == MINE
        assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_a_file_changed_since_keeps_the_change_and_one_backup_of_it_as_found(
    tmp_path: Path,
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(MINE)
    path.chmod(0o600)
    install(tmp_path)
    data = json.loads(path.read_text())
    data["x"] = 2
    path.write_text(json.dumps(data))
    manifest = Manifest.load(tmp_path)
    change = manifest.unmerge_file(path, RULES, ours=OURS, backup=True)
    manifest.remove()
    assert change.changed
    assert not change.as_found
    assert json.loads(path.read_text()) == {**json.loads(MINE), "x": 2}
    (kept,) = backups(tmp_path)
    assert change.backup == kept
    assert kept.read_text() == MINE
    for each in (path, kept):  # a file only its owner may read stays so, its backup too
        assert stat.S_IMODE(each.stat().st_mode) == 0o600


def test_another_snippet_replaces_the_earlier_one_and_the_change_is_said(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(MINE)
    install(tmp_path)
    manifest = Manifest.load(tmp_path)
    change = manifest.merge_file(path, snippet("our-hook --other"), RULES, ours=OURS)
    manifest.save()
    assert change.changes == ["hooks added for Stop, SessionStart"]
    stop = json.loads(path.read_text())["hooks"]["Stop"]
    assert [g["hooks"][0]["command"] for g in stop] == ["mine", "our-hook --other"]
    uninstall(tmp_path)
    assert path.read_text() == MINE


def test_a_file_that_cannot_be_parsed_or_merged_is_refused_and_nothing_written(
    tmp_path: Path,
) -> None:
    path = tmp_path / "settings.json"
    for text in ("{not json", "[]", '{"hooks": {"Stop": {}}}'):
        path.write_text(text)
        with pytest.raises(ConfigError, match="nothing was changed"):
            install(tmp_path)
        assert path.read_text() == text
        assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_copies_go_only_while_unchanged_and_a_file_of_the_users_stays(tmp_path: Path) -> None:
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "mine.md").write_text("mine\n")
    manifest = Manifest.load(tmp_path)
    shipped = [("agents/mine.md", b"ours\n"), ("agents/a.md", b"a\n"), ("x/y/b.md", b"b\n")]
    done = manifest.copy_files(shipped)
    assert (done.added, done.kept) == (["agents/a.md", "x/y/b.md"], ["agents/mine.md"])
    manifest.save()
    # A later version ships a.md no more: it goes (unchanged); b.md is edited by the user.
    (tmp_path / "x" / "y" / "b.md").write_text("edited\n")
    manifest = Manifest.load(tmp_path)
    done = manifest.copy_files([("x/y/b.md", b"b2\n")])
    assert (done.removed, done.kept) == (["agents/a.md"], ["x/y/b.md"])
    manifest.save()
    manifest = Manifest.load(tmp_path)
    done = manifest.remove_copies()
    manifest.remove()
    assert done.kept == ["x/y/b.md"]
    assert (tmp_path / "agents" / "mine.md").read_text() == "mine\n"
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.md")) == [
        "agents/mine.md",
        "x/y/b.md",
    ]


def test_an_older_manifest_is_read_through_the_hosts_upgrade(tmp_path: Path) -> None:
    (tmp_path / MANIFEST_NAME).write_text(json.dumps({"version": 1, "command": "x"}))
    seen: list[dict[str, Any]] = []

    def upgrade(old: dict[str, Any]) -> dict[str, Any]:
        seen.append(old)
        return {"mine": old["command"]}

    assert Manifest.load(tmp_path, upgrade).data == {"mine": "x"}
    assert seen == [{"version": 1, "command": "x"}]
    assert Manifest.load(tmp_path).data == {}  # no upgrade: nothing known of it


def test_a_manifest_of_a_newer_version_is_refused(tmp_path: Path) -> None:
    (tmp_path / MANIFEST_NAME).write_text(json.dumps({"version": VERSION + 1}))
    with pytest.raises(ConfigError, match="newer ctxrelay"):
        Manifest.load(tmp_path)
