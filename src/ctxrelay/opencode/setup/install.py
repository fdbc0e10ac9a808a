"""Install ctxrelay's plugin into an OpenCode config folder and take exactly that out
again (``ctxrelay opencode install | uninstall``, :mod:`ctxrelay.cli.opencode`).

The plugin goes to ``plugin/ctxrelay.ts`` of the project's ``.opencode/`` or the user's
``$XDG_CONFIG_HOME/opencode/`` (``~/.config/opencode``), with this environment's hook
command by absolute path, run on a real payload of every event it forwards first
(:func:`choose_command`). The machinery is the core's (:mod:`ctxrelay.hooks.install`):
the copy is recorded in the manifest ``ctxrelay-install.json`` beside it, and uninstall
removes it while unchanged, then the manifest and each folder install created.

Offline (``docs/opencode-facts.md``): at every start OpenCode npm-installs
``@opencode-ai/plugin`` into each config folder that holds a plugin, unless the folder
has ``node_modules/`` and a ``package-lock.json`` naming every dependency of its
``package.json``; without a network that install stalls the start and then fails. The
plugin imports no package, so it needs none of it: install writes that stub where the
folder has none of those files (:data:`STUB`), and uninstall takes out what it wrote,
with what OpenCode itself added beside it (its ``.gitignore``) in a folder install
created.

``session_history``: install merges the core's MCP server (``ctxrelay opencode mcp``,
:mod:`ctxrelay.opencode.setup.mcp`) as ``mcp.ctxrelay`` into ``opencode.json`` of the
same config folder (OpenCode reads that file in ``.opencode/`` as in the user's folder,
verified on 1.18.33 with ``opencode debug config``), by the core's merge rules; uninstall
takes out that key only, and the file as found when nothing else changed it.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxrelay.errors import ConfigError
from ctxrelay.hooks.install import launch
from ctxrelay.hooks.install.launch import choose_hook, ctxrelay_command
from ctxrelay.hooks.install.manifest import MANIFEST_NAME, Manifest
from ctxrelay.hooks.install.merge import Rule, Rules
from ctxrelay.opencode.setup import probe
from ctxrelay.opencode.setup.mcp import CONFIG_KEY, registration
from ctxrelay.opencode.setup.plugin import PLUGIN_NAME, render

__all__ = [
    "CONFIG_FILE",
    "HOOK_MODULE",
    "PLUGIN_PATH",
    "InstallResult",
    "choose_command",
    "config_dir",
    "hook_candidates",
    "install",
    "is_ours",
    "plugin_path",
    "uninstall",
]

HOOK_MODULE = "ctxrelay.opencode.hook"
PLUGIN_PATH = f"plugin/{PLUGIN_NAME}"
"""The plugin under a config folder (OpenCode loads ``plugin/*.ts`` and ``*.js``)."""
CONFIG_FILE = "opencode.json"
"""The config file of a config folder that install merges ``session_history`` into."""
MERGE_RULES: Rules = {CONFIG_KEY: Rule.KEYS}
"""What install merges into :data:`CONFIG_FILE`: of ``mcp``, only ``ctxrelay``."""
PLUGIN_PACKAGE = "@opencode-ai/plugin"
"""What OpenCode npm-installs into each config folder at start."""
OPENCODE_IGNORE = ".gitignore"
"""What OpenCode writes into a config folder beside the stub (it names ``node_modules``
and the package files)."""


def config_dir(scope: str, project: Path) -> Path:
    """The config folder of the user (``$XDG_CONFIG_HOME/opencode``) or of ``project``."""
    if scope != "user":
        return project / ".opencode"
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".config"
    return base / "opencode"


def plugin_path(scope: str, project: Path) -> Path:
    return config_dir(scope, project) / PLUGIN_PATH


def hook_candidates() -> list[str]:
    """The hook commands of this environment, in the order install tries them."""
    return launch.hook_candidates(HOOK_MODULE)


def is_ours(command: object) -> bool:
    """Whether a hook command runs ctxrelay's OpenCode hook."""
    return launch.runs_hook(command, HOOK_MODULE)


def choose_command(command: str | None = None) -> str:
    """The hook command to install: ``command`` when given, else the first of this
    environment's that works on real payloads of every event; one that does not is a
    :class:`ConfigError`, and nothing is written."""
    return choose_hook(
        command,
        hook_candidates(),
        probe.check_every_event,
        reinstall="pipx install '.[guard]' in a clone of its repository",
    )


def stub(version: str) -> dict[str, str]:
    """The files that keep OpenCode from npm-installing its plugin package at start: a
    ``package.json`` naming it, a lock that names it too (``node_modules/`` is made
    beside them)."""
    dependencies = {PLUGIN_PACKAGE: version}
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": dependencies}}}
    return {
        "package.json": json.dumps({"dependencies": dependencies}, indent=2) + "\n",
        "package-lock.json": json.dumps(lock, indent=2) + "\n",
    }


@dataclass
class InstallResult:
    plugin: Path
    changed: bool
    command: str = ""
    changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "plugin": str(self.plugin),
            "changed": self.changed,
            "command": self.command,
            "changes": self.changes,
            "notes": self.notes,
        }


def _prefill(folder: Path, version: str, manifest: Manifest) -> list[str]:
    """Write the stub where the folder has none of it; what was written, by name."""
    names = [*stub(version), "node_modules"]
    if any((folder / name).exists() for name in names):
        return []  # the user's (or OpenCode's) own: left as it is
    for name, text in stub(version).items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "node_modules").mkdir()
    manifest.data["stub"] = names
    return names


def install(scope: str, project: Path, command: str, version: str) -> InstallResult:
    """Write the plugin running ``command`` into the ``scope`` config folder, and the
    stub that lets OpenCode ``version`` load it offline."""
    folder = config_dir(scope, project)
    manifest = Manifest.load(folder)
    copies = manifest.copy_files([(PLUGIN_PATH, render(command).encode())])
    if copies.kept:
        raise ConfigError(
            f"{folder / PLUGIN_PATH} is not ctxrelay's (or was changed since install); "
            "move it away first, nothing was changed"
        )
    result = InstallResult(folder / PLUGIN_PATH, bool(copies.added), command)
    if copies.added:
        result.changes.append(f"wrote the plugin {folder / PLUGIN_PATH}")
    folder.mkdir(parents=True, exist_ok=True)
    written = _prefill(folder, version, manifest)
    if written:
        result.changed = True
        result.changes.append(
            f"wrote {', '.join(written)} in {folder} so that OpenCode loads it offline "
            f"(it would npm-install {PLUGIN_PACKAGE} there at every start)"
        )
    config = folder / CONFIG_FILE
    merged = manifest.merge_file(config, registration(ctxrelay_command()), MERGE_RULES, backup=True)
    if merged.changed:
        result.changed = True
        result.changes.append(f"registered session_history (mcp.ctxrelay) in {config}")
    if merged.backup is not None:
        result.notes.append(f"{config} as it was found is kept in {merged.backup}")
    manifest.data["command"] = command
    manifest.save()
    result.notes.append("restart a running opencode: it loads its plugins when it starts")
    return result


def _take_stub(folder: Path, names: list[str], created: bool) -> list[str]:
    """Remove the stub install wrote while it is still only that (OpenCode's npm did
    not fill ``node_modules``), and OpenCode's ``.gitignore`` in a folder install made."""
    taken: list[str] = []
    for name in names:
        path = folder / name
        if name == "node_modules":
            with contextlib.suppress(OSError):
                path.rmdir()  # only when empty: OpenCode's own install stays
                taken.append(name)
        elif path.is_file():
            path.unlink()
            taken.append(name)
    ignore = folder / OPENCODE_IGNORE
    if (
        created
        and ignore.is_file()
        and set(os.listdir(folder)) <= {OPENCODE_IGNORE, "plugin", MANIFEST_NAME}
    ):
        ignore.unlink()
        taken.append(OPENCODE_IGNORE)
    return taken


def uninstall(scope: str, project: Path) -> InstallResult:
    """Remove what :func:`install` wrote: the plugin while unchanged, the stub, the
    manifest, and the folders install created once empty."""
    folder = config_dir(scope, project)
    manifest = Manifest.load(folder)
    copies = manifest.remove_copies()
    result = InstallResult(folder / PLUGIN_PATH, bool(copies.removed))
    if copies.removed:
        result.changes.append(f"removed the plugin {folder / PLUGIN_PATH}")
    for kept in copies.kept:
        result.notes.append(f"{folder / kept} changed since install and was left")
    config = folder / CONFIG_FILE
    taken_mcp = manifest.unmerge_file(
        config, MERGE_RULES, backup=True, what="ctxrelay's MCP server"
    )
    if taken_mcp.changed:
        result.changed = True
        result.changes.append(f"removed session_history (mcp.ctxrelay) from {config}")
    if taken_mcp.changed and not taken_mcp.as_found:
        kept = "" if taken_mcp.backup is None else f" (as it was found: {taken_mcp.backup})"
        result.notes.append(f"{config} changed since install: only mcp.ctxrelay was removed{kept}")
    names = manifest.data.pop("stub", None)
    if isinstance(names, list):
        created = bool(manifest.data.get("dir_created"))
        taken = _take_stub(folder, [str(n) for n in names], created)
        if taken:
            result.changed = True
            result.changes.append(f"removed {', '.join(taken)} from {folder}")
    manifest.remove()
    return result
