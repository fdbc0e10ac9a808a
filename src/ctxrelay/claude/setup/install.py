"""Install the plugin through Claude Code's settings, and remove exactly that again
(the commands: ``ctxrelay claude install | uninstall``, :mod:`ctxrelay.cli.claude`).

:func:`install` merges the settings snippet (:func:`ctxrelay.claude.setup._snippet.snippet`:
the environment, the hooks and the statusline) into Claude Code's ``settings.json`` of
the project (``.claude/settings.json``, the default) or of the user
(``~/.claude/settings.json``), and copies the plugin's agents (and skills) beside it. The
machinery is the core's (:mod:`ctxrelay.hooks.install`): the data-driven merge, the
manifest ``ctxrelay-install.json`` next to the settings, the backup and the byte-exact
restore, so install is idempotent, keeps one backup of the file it changes, refuses a
settings file it cannot parse, and uninstall leaves the project as install found it.
What is Claude Code's here is which keys merge how (:data:`MERGE_RULES`: ``hooks`` and
``permissions`` get our entries appended to their lists, ``enabledMcpjsonServers`` our
server's name, ``env`` our keys; any other key, e.g. ``statusLine``, is set whole), which
hook groups are ctxrelay's (any running ``ctxrelay.claude.hook`` or ``ctxrelay-hook``:
an earlier install's, an older layout's, a pasted snippet's are replaced, never
doubled), and the files it copies.

``session_history`` reaches Claude Code as the MCP server ``ctxrelay``
(:mod:`ctxrelay.claude.extras.mcp`): a project install adds it to the project's ``.mcp.json``,
approved by ``enabledMcpjsonServers`` and allowed by ``permissions.allow`` in the
settings, so the model sees ``mcp__ctxrelay__session_history`` with no dialog and no
prompt (``docs/claude-code-facts.md``, "MCP servers"). A user install cannot name a
project's ``.mcp.json``; it says the one command that registers the server for every
project (:func:`mcp_add_command`).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxrelay.claude.extras import automod
from ctxrelay.claude.extras.mcp import MODEL_TOOL_NAME, SERVER_NAME
from ctxrelay.claude.handoff import INSTALLED_SKILL
from ctxrelay.claude.setup import launcher, probe
from ctxrelay.claude.setup._snippet import (
    CTXRELAY_COMMAND,
    HOOK_COMMAND,
    plugin_dir,
    snippet,
    statusline_command,
)
from ctxrelay.claude.setup.launcher import is_ours
from ctxrelay.errors import ConfigError
from ctxrelay.hooks.install.entries import runs_ours
from ctxrelay.hooks.install.launch import choose_hook, ctxrelay_command
from ctxrelay.hooks.install.manifest import Manifest
from ctxrelay.hooks.install.merge import ABSENT, Ours, Rule, Rules

__all__ = [
    "BARE",
    "COPIED_DIRS",
    "MCP_JSON",
    "MERGE_RULES",
    "OURS",
    "Commands",
    "InstallResult",
    "choose_commands",
    "install",
    "mcp_add_command",
    "mcp_server_entry",
    "settings_path",
    "uninstall",
]

MCP_JSON = ".mcp.json"
"""The project's MCP servers file, at the project's root, where install names the server."""

COPIED_DIRS = ("agents", "skills")
"""Plugin subdirectories copied into the scope's ``.claude/`` (a plugin install brings
them itself; a settings install must copy them)."""

MERGE_RULES: Rules = {
    "hooks": Rule.LISTS,
    "permissions": Rule.LISTS,
    "enabledMcpjsonServers": Rule.LIST,
    "env": Rule.KEYS,
}
"""How each key of Claude Code's snippet merges (every other key is set whole)."""

OURS: Ours = {"hooks": runs_ours(is_ours)}
"""The hook groups that are ctxrelay's, whatever command they run it with."""

_MCP_RULES: Rules = {"mcpServers": Rule.KEYS}

_PLUGIN_SKILL_DIR = "handoff"
"""The handoff skill's directory (and name) in the plugin: ``/ctxrelay:handoff``."""

_SKILL_COMMAND = b"ctxrelay claude handoff"
"""How the shipped skill runs ctxrelay (its ``!`` line and its ``allowed-tools``)."""


@dataclass(frozen=True, slots=True)
class Commands:
    """What the installed settings run: ``hook`` for every hook event, ``ctxrelay`` (a
    ``ctxrelay`` command) for the statusline and the handoff skill."""

    hook: str
    ctxrelay: str

    def snippet(self) -> dict[str, Any]:
        """The settings snippet, with the MCP server approved and its tool allowed."""
        return {
            **snippet(self.hook, self.ctxrelay),
            "enabledMcpjsonServers": [SERVER_NAME],
            "permissions": {"allow": [MODEL_TOOL_NAME]},
        }


def mcp_server_entry(ctxrelay: str) -> dict[str, Any]:
    """The ``.mcp.json`` entry that starts ``ctxrelay claude mcp`` with ``ctxrelay``."""
    words = shlex.split(ctxrelay)
    return {"type": "stdio", "command": words[0], "args": [*words[1:], "claude", "mcp"]}


def mcp_add_command(ctxrelay: str) -> str:
    """The one command that registers the server for every project of the user (what a
    user install and the plugin route leave to the user)."""
    return f"claude mcp add --scope user {SERVER_NAME} -- {ctxrelay} claude mcp"


BARE = Commands(HOOK_COMMAND, CTXRELAY_COMMAND)
"""The commands by name, found on ``PATH``: what the shipped snippet says, and what
installs before absolute commands wrote."""


def choose_commands(hook: str | None = None, ctxrelay: str | None = None) -> Commands:
    """The commands to install: ``hook`` and ``ctxrelay`` when given (``--command``,
    ``--ctxrelay``), else this environment's, the first hook command of
    :mod:`ctxrelay.claude.setup.launcher` that works. Each is run on real payloads first
    (the hook's include one only the guard's shell parser judges); one that does not work
    is a :class:`ConfigError` saying what to do, and nothing is written
    (:func:`ctxrelay.hooks.install.launch.choose_hook`)."""
    hook = choose_hook(
        hook,
        launcher.hook_candidates(),
        lambda command: probe.check_hook(command, runs=1),
        reinstall="pipx install '.[claude]' in a clone of its repository",
    )
    ctxrelay = ctxrelay_command() if ctxrelay is None else ctxrelay
    status = probe.check_statusline(statusline_command(ctxrelay))
    if not status.ok:
        raise ConfigError(
            f"the ctxrelay command {ctxrelay!r} does not work ({status.detail}); pass "
            "--ctxrelay with one that does"
        )
    return Commands(hook, ctxrelay)


@dataclass
class InstallResult:
    settings: Path
    changed: bool
    backup: Path | None = None
    files_added: list[str] = field(default_factory=list)
    files_kept: list[str] = field(default_factory=list)
    files_removed: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    """What changed in the settings (and ``.mcp.json``), one sentence each."""
    todo: list[str] = field(default_factory=list)
    """What is left for the user to do, one sentence each."""

    def as_json(self) -> dict[str, Any]:
        return {
            "settings": str(self.settings),
            "changed": self.changed,
            "backup": None if self.backup is None else str(self.backup),
            "files_added": self.files_added,
            "files_kept": self.files_kept,
            "files_removed": self.files_removed,
            "changes": self.changes,
            "todo": self.todo,
        }


def settings_path(scope: str, project: Path, home: Path) -> Path:
    base = home if scope == "user" else project
    return base / ".claude" / "settings.json"


def _installed_as(rel: str, content: bytes, ctxrelay: str) -> tuple[str, bytes]:
    """Where a plugin file goes in ``.claude/``, and its content there. The handoff skill
    becomes ``skills/ctxrelay-handoff/`` named ``ctxrelay-handoff``: Claude Code runs an
    installed skill by its own name (``/ctxrelay-handoff``), not by the plugin's
    ``/ctxrelay:handoff``, and the prefix keeps a skill of yours called ``handoff``. Its
    ``!`` line and ``allowed-tools`` run ``ctxrelay`` (the installed command)."""
    prefix = f"skills/{_PLUGIN_SKILL_DIR}/"
    if not rel.startswith(prefix):
        return rel, content
    rel = f"skills/{INSTALLED_SKILL}/{rel[len(prefix) :]}"
    if rel.endswith("/SKILL.md"):
        content = content.replace(_SKILL_COMMAND, f"{ctxrelay} claude handoff".encode())
        content = re.sub(
            rb"(?m)^name:[ \t]*" + re.escape(_PLUGIN_SKILL_DIR.encode()) + rb"[ \t]*$",
            b"name: " + INSTALLED_SKILL.encode(),
            content,
            count=1,
        )
    return rel, content


def _plugin_files(ctxrelay: str) -> list[tuple[str, bytes]]:
    """Each file install copies: its path under the scope's ``.claude/``, its content."""
    root = plugin_dir()
    found: list[tuple[str, bytes]] = []
    for sub in COPIED_DIRS:
        base = root / sub
        if base.is_dir():
            found += [
                _installed_as(p.relative_to(root).as_posix(), p.read_bytes(), ctxrelay)
                for p in sorted(base.rglob("*"))
                if p.is_file()
            ]
    return found + automod.files()


def _upgrade(settings: Path, old: dict[str, Any]) -> dict[str, Any]:
    """A manifest an earlier version wrote next to ``settings`` (its version 1: the
    settings' record, its backup, and ``.mcp.json``'s own record) in the core's format."""
    found = old.get("created")
    created: dict[str, Any] = found if isinstance(found, dict) else {}
    new: dict[str, Any] = {k: old[k] for k in ("files", "commands") if k in old}
    merged: dict[str, Any] = {}
    if isinstance(old.get("settings"), dict):
        recorded = old.get("snippet")
        backup = old.get("backup")
        merged[str(settings)] = {
            "created": bool(created.get("settings")),
            "text": None,
            "dir_created": bool(created.get("dir")),
            "backup": backup if isinstance(backup, str) else None,
            # An install from before the snippet was recorded merged the bare one.
            "snippet": recorded if isinstance(recorded, dict) else BARE.snippet(),
            "record": old["settings"],
        }
    mcp = old.get("mcp_json")
    if isinstance(mcp, dict) and isinstance(mcp.get("path"), str):
        text = mcp.get("text") if isinstance(mcp.get("text"), str) else None
        try:
            had = json.loads(text) if text else {}
        except ValueError:
            had = {}
        previous = mcp.get("previous") if isinstance(mcp.get("previous"), dict) else ABSENT
        merged[mcp["path"]] = {
            "created": bool(mcp.get("created")),
            "text": text,
            "dir_created": False,
            "backup": None,
            "snippet": {"mcpServers": {SERVER_NAME: mcp.get("entry")}},
            "record": {
                "mcpServers": {
                    "kind": "keys",
                    "created": bool(mcp.get("created"))
                    or not (isinstance(had, dict) and "mcpServers" in had),
                    "previous": {SERVER_NAME: previous},
                }
            },
        }
    new["merged"] = merged
    return new


def _manifest(settings: Path) -> Manifest:
    return Manifest.load(settings.parent, lambda old: _upgrade(settings, old))


def install(
    settings: Path, commands: Commands = BARE, *, mcp_json: Path | None = None
) -> InstallResult:
    """Merge the snippet of ``commands`` into ``settings`` and copy the plugin's agents
    and skills into its directory; with ``mcp_json`` (a project install: the project's
    ``.mcp.json``), name the MCP server there. Safe to run again: nothing changes the
    second time; with other commands (another environment, ``--command``), what the
    earlier install merged is replaced, never doubled."""
    manifest = _manifest(settings)
    merged = manifest.merge_file(settings, commands.snippet(), MERGE_RULES, ours=OURS, backup=True)
    result = InstallResult(settings, merged.changed, merged.backup, changes=merged.changes)
    manifest.data["commands"] = {"hook": commands.hook, "ctxrelay": commands.ctxrelay}
    if mcp_json is not None:
        server = manifest.merge_file(
            mcp_json,
            {"mcpServers": {SERVER_NAME: mcp_server_entry(commands.ctxrelay)}},
            _MCP_RULES,
            said=f"the MCP server {SERVER_NAME} named in {mcp_json}",
        )
        result.changed |= server.changed
        result.changes += server.changes
    else:
        result.todo.append(
            "session_history needs the MCP server in every project; register it once with: "
            + mcp_add_command(commands.ctxrelay)
        )
    copies = manifest.copy_files(_plugin_files(commands.ctxrelay))
    result.files_added, result.files_kept = copies.added, copies.kept
    result.files_removed = copies.removed
    result.changed |= copies.changed
    manifest.save()
    return result


def uninstall(settings: Path) -> InstallResult:
    """Remove exactly what :func:`install` added (files only while unchanged), and leave
    the project as install found it (:mod:`ctxrelay.hooks.install.manifest`). Without a
    record, what equals the bare snippet and every hook of ctxrelay's go."""
    manifest = _manifest(settings)
    others = [Path(p) for p in manifest.data.get("merged", {}) if Path(p) != settings]
    taken = manifest.unmerge_file(
        settings, MERGE_RULES, ours=OURS, default=BARE.snippet(), backup=True
    )
    result = InstallResult(settings, taken.changed, taken.backup, changes=taken.changes)
    copies = manifest.remove_copies()
    result.files_removed, result.files_kept = copies.removed, copies.kept
    result.changed |= copies.changed
    for path in others:  # the project's .mcp.json
        server = manifest.unmerge_file(path, _MCP_RULES, what=f"the MCP server {SERVER_NAME}")
        result.changed |= server.changed
        result.changes += server.changes
    manifest.remove()
    return result
