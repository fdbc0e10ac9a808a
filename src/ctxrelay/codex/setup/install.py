"""Install ctxrelay's hooks into Codex's ``hooks.json``, trust them the way Codex's own
``/hooks`` screen does, and remove exactly that again (``ctxrelay codex install |
uninstall``, :mod:`ctxrelay.cli.codex`).

The hooks go to the user layer (``$CODEX_HOME/hooks.json``) or the project layer
(``<project>/.codex/hooks.json``), never to ``[hooks]`` in ``config.toml`` (both forms
in one layer make Codex warn on every run). The machinery is the core's
(:mod:`ctxrelay.hooks.install`): our groups are appended to each event's list, so the
positions (and so the trust keys) of the user's own hooks do not move; any group that
runs ``ctxrelay.codex.hook`` (an earlier install's, an older layout's) is replaced,
never doubled; the manifest ``ctxrelay-install.json`` and one backup of the file as
found sit beside it, and uninstall puts back the very bytes it found (or removes a file
that was not there) when nothing else changed it since, and otherwise removes only our
groups.

Trust: :func:`trust` asks ``codex app-server`` for the hooks as Codex sees them
(``hooks/list``), records the ``currentHash`` Codex reported for each of ours
(``config/batchWrite``, into the user's ``config.toml``), and lists again, requiring
``trusted`` for each. ctxrelay never computes a hash and never passes a bypass flag.

Codex keys a trust record by the hook's place (``<file>:<event>:<group>:<handler>``), so
a group that moves (ours replaced at the end, ours removed from before yours, yours
edited by hand) leaves records that name no hook, or the wrong one. Install and
uninstall leave records exactly for the hooks that exist (:func:`stale_trust_edits`):
a record whose place no hook holds any more goes, and the record of a hook of yours that
only moved, its definition (Codex's hash of it) unchanged, moves with it; a hook you
changed keeps its record, and Codex reports it ``modified`` until you review it.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxrelay.codex.config import codex_home
from ctxrelay.codex.setup import launcher, mcp, probe
from ctxrelay.codex.setup.appserver import AppServer, HookEntry, trust_edit, untrust_edit
from ctxrelay.codex.setup.launcher import is_ours
from ctxrelay.errors import ConfigError
from ctxrelay.hooks.history import SERVER_NAME
from ctxrelay.hooks.install.entries import command_hooks, hook_commands, runs_ours
from ctxrelay.hooks.install.files import load_json
from ctxrelay.hooks.install.launch import REINSTALL_GUARD, choose_hook, ctxrelay_command
from ctxrelay.hooks.install.manifest import Manifest
from ctxrelay.hooks.install.merge import Ours, Rule, Rules, merge

__all__ = [
    "EVENTS",
    "MERGE_RULES",
    "OURS",
    "InstallResult",
    "TrustResult",
    "choose_command",
    "codex_env",
    "codex_home",
    "config_toml",
    "hooks_config",
    "hooks_path",
    "inline_hooks",
    "install",
    "install_hooks",
    "installed_commands",
    "layer_config",
    "our_entries",
    "project_trusted",
    "settle",
    "stale_trust_edits",
    "trust",
    "trust_advice",
    "uninstall",
    "uninstall_hooks",
    "untrust",
    "untrusted_project_advice",
]

EVENTS: Mapping[str, str | None] = {
    "PreToolUse": "Bash",
    "PostToolUse": "Bash",
    "PostCompact": None,
    "Stop": None,
    "SessionStart": None,
}
"""The events ctxrelay's hook answers on Codex, with their matcher (Codex matches the
hook-visible tool name, ``Bash`` for its shell, by a full regex match)."""

MERGE_RULES: Rules = {"hooks": Rule.LISTS}
"""``hooks.json`` holds one key, an object of each event's groups."""

OURS: Ours = {"hooks": runs_ours(is_ours)}
"""The groups that are ctxrelay's, whatever command they run ``ctxrelay.codex.hook`` with."""


def codex_env(home: Path) -> dict[str, str]:
    """This process's environment with ``CODEX_HOME`` set to ``home``."""
    return dict(os.environ, CODEX_HOME=str(home))


def hooks_path(scope: str, project: Path, home: Path) -> Path:
    """The ``hooks.json`` of the user layer (``home``) or of ``project``'s layer."""
    return home / "hooks.json" if scope == "user" else project / ".codex" / "hooks.json"


def installed_commands(path: Path) -> dict[str, str]:
    """ctxrelay's hook commands in the layer file ``path``, by event (empty when none);
    raises :class:`~ctxrelay.errors.ConfigError` for a file that is not JSON."""
    return {e: c for e, c in hook_commands(load_json(path).get("hooks")) if is_ours(c)}


def hooks_config(command: str) -> dict[str, list[dict[str, Any]]]:
    """ctxrelay's groups for each event, running ``command``."""
    return command_hooks(EVENTS, command, matchers=EVENTS)


def choose_command(command: str | None = None) -> str:
    """The hook command to install: ``command`` when given, else the first of this
    environment's that works. Each is run on real payloads of every event first (the
    ``PreToolUse`` ones include a command only the guard's shell parser judges); one that
    does not work is a :class:`ConfigError`, and nothing is written
    (:func:`ctxrelay.hooks.install.launch.choose_hook`)."""
    return choose_hook(
        command,
        launcher.hook_candidates(),
        lambda candidate: probe.check_every_event(candidate, list(EVENTS)),
        reinstall=REINSTALL_GUARD,
    )


@dataclass
class InstallResult:
    hooks: Path
    changed: bool
    command: str = ""
    trust: TrustResult | None = None
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "hooks": str(self.hooks),
            "changed": self.changed,
            "command": self.command,
            "trust": None if self.trust is None else self.trust.as_json(),
            "notes": self.notes,
        }


@dataclass(frozen=True, slots=True)
class TrustResult:
    """Each of our hooks as Codex sees it after trusting, or why trusting failed."""

    hooks: tuple[HookEntry, ...] = ()
    problem: str | None = None
    wrote: bool = False
    """Whether trusting changed ``config.toml`` (a record written, moved or removed)."""

    @property
    def ok(self) -> bool:
        return self.problem is None and all(h.trust == "trusted" for h in self.hooks)

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "problem": self.problem,
            "hooks": [{"key": h.key, "event": h.event, "trust": h.trust} for h in self.hooks],
        }


def _upgrade(path: Path, old: dict[str, Any]) -> dict[str, Any]:
    """A manifest an earlier version wrote beside ``path`` (its version 1: the file's
    text as found, whether its folder was there, the command) in the core's format, with
    the record its merge would have made, so uninstall still gives back those bytes."""
    found = old.get("found") if isinstance(old.get("found"), dict) else None
    command = old.get("command")
    new: dict[str, Any] = {k: old[k] for k in ("config_existed",) if k in old}
    if found is None or not isinstance(command, str):
        return new
    text = found.get("text") if isinstance(found.get("text"), str) else None
    try:
        had = json.loads(text) if text and text.strip() else {}
    except ValueError:
        had = {}
    add = {"hooks": hooks_config(command)}
    try:
        _, record = merge(had if isinstance(had, dict) else {}, add, MERGE_RULES, OURS)
    except ConfigError:
        record = None
    new["merged"] = {
        str(path): {
            "created": text is None,
            "text": text,
            "dir_created": not found.get("dir_existed", True),
            "backup": None,
            "snippet": add,
            "record": record,
        }
    }
    return new


def _manifest(path: Path) -> Manifest:
    return Manifest.load(path.parent, lambda old: _upgrade(path, old))


def _install(manifest: Manifest, path: Path, command: str) -> InstallResult:
    merged = manifest.merge_file(
        path, {"hooks": hooks_config(command)}, MERGE_RULES, ours=OURS, backup=True
    )
    manifest.data["command"] = command
    manifest.save()
    result = InstallResult(path, merged.changed, command=command)
    if merged.backup is not None:
        result.notes.append(f"the file as it was found is kept in {merged.backup}")
    return result


def install(path: Path, command: str) -> InstallResult:
    """Append ctxrelay's groups running ``command`` to ``path`` (replacing the groups of
    an earlier install, never doubling them). Safe to run again."""
    return _install(_manifest(path), path, command)


def _uninstall(manifest: Manifest, path: Path) -> InstallResult:
    taken = manifest.unmerge_file(
        path, MERGE_RULES, ours=OURS, default={"hooks": {}}, backup=True, what="ctxrelay's hooks"
    )
    result = InstallResult(path, taken.changed)
    if taken.changed and not taken.as_found:
        kept = "" if taken.backup is None else f" (as it was found: {taken.backup})"
        result.notes.append(
            f"{path} changed since install: only ctxrelay's hooks were removed{kept}"
        )
    return result


def uninstall(path: Path) -> InstallResult:
    """Remove what :func:`install` added: the file as it was found when nothing else
    changed it since, else only ctxrelay's groups."""
    manifest = _manifest(path)
    result = _uninstall(manifest, path)
    manifest.remove()
    return result


def our_entries(listing: Sequence[HookEntry], path: Path) -> list[HookEntry]:
    """The hooks of ctxrelay's that Codex lists from the file ``path``."""
    where = str(path)
    return [h for h in listing if is_ours(h.command) and h.source_path == where]


def project_trusted(config: Mapping[str, Any], project: Path) -> bool:
    """Whether Codex's effective config marks ``project`` (or a folder above it) trusted:
    only then does Codex load the project's ``.codex/`` layer."""
    projects = config.get("projects")
    if not isinstance(projects, dict):
        return False
    for folder in (project, *project.parents):
        entry = projects.get(str(folder))
        if isinstance(entry, dict) and entry.get("trust_level") == "trusted":
            return True
    return False


def untrusted_project_advice(project: Path) -> str:
    """The one sentence for a project layer Codex does not load."""
    return (
        f"Codex loads {project / '.codex'} only in a trusted project and does not trust "
        f"{project}: start codex there and trust the project, then run 'ctxrelay codex "
        f"install --project-dir {project}' again (ctxrelay never trusts a project for you: "
        "that also enables its MCP servers and config)"
    )


def trust_advice(path: Path) -> str:
    """The one sentence for when ctxrelay cannot record the trust itself."""
    return (
        f"Codex will not run ctxrelay's hooks until you trust them: run codex in the "
        f"project, type /hooks, and trust each entry from {path} whose command runs "
        "ctxrelay.codex.hook"
    )


def _records(server: AppServer, project: Path) -> dict[str, str]:
    """The trust records of the user's ``config.toml``: hook key -> trusted hash."""
    hooks = server.user_config(project).get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return {
        key: value["trusted_hash"]
        for key, value in (state.items() if isinstance(state, dict) else ())
        if isinstance(value, dict) and isinstance(value.get("trusted_hash"), str)
    }


def stale_trust_edits(
    listing: Sequence[HookEntry], records: Mapping[str, str], path: Path
) -> list[dict[str, Any]]:
    """The ``config/batchWrite`` edits that leave the trust records of the layer file
    ``path`` exactly for the hooks Codex lists from it: the record of a hook of the
    user's that moved (no record at its place, its hash recorded at a place it left)
    moves with it; a record whose place holds no hook, or one of ctxrelay's, or whose
    hash moved, goes. Records of ctxrelay's hooks are :func:`trust`'s to write."""
    here = {h.key: h for h in listing if h.source_path == str(path)}
    prefix = f"{path}:"
    stale = {
        key: hashed
        for key, hashed in records.items()
        if key.startswith(prefix) and (key not in here or here[key].current_hash != hashed)
    }
    moved: dict[str, str] = {}
    for hook in here.values():
        if is_ours(hook.command) or hook.trust == "trusted":
            continue
        if any(hashed == hook.current_hash and key != hook.key for key, hashed in stale.items()):
            moved[hook.key] = hook.current_hash
    gone = [
        key
        for key, hashed in stale.items()
        if key not in moved
        and (key not in here or hashed in moved.values() or is_ours(here[key].command))
    ]
    edits = [untrust_edit(key) for key in gone]
    if moved:
        value = {key: {"trusted_hash": hashed} for key, hashed in moved.items()}
        edits.append({"keyPath": "hooks.state", "mergeStrategy": "upsert", "value": value})
    return edits


def _readable(path: Path) -> bool:
    """Whether ``path`` is a hooks file Codex can read (absent counts: it holds no hook).
    One it cannot read lists no hook, yet its hooks are there: their records stay."""
    try:
        load_json(path)
    except ConfigError:
        return False
    return True


def _settle(server: AppServer, project: Path, home: Path) -> bool:
    """Leave the trust records of both layer files exactly for their hooks (the
    project's only where Codex loads it: an untrusted project's hooks are not listed;
    a file Codex cannot read keeps its records); whether anything was written."""
    listing = server.hooks(project)
    records = _records(server, project)
    paths = [hooks_path("user", project, home)]
    if project_trusted(server.config(project), project):
        paths.append(hooks_path("project", project, home))
    edits = [
        edit
        for path in paths
        if _readable(path) and not any(str(path) in e for e in listing.errors)
        for edit in stale_trust_edits(listing.hooks, records, path)
    ]
    if edits:
        server.write(edits)
    return bool(edits)


def trust(codex: Path, home: Path, project: Path, path: Path) -> TrustResult:
    """Trust ctxrelay's hooks of ``path`` through ``codex app-server``, as Codex's
    ``/hooks`` screen does, then require Codex to report each ``trusted``."""
    try:
        with AppServer(codex, codex_env(home), cwd=project) as server:
            ours = our_entries(server.hooks(project).hooks, path)
            if len(ours) != len(EVENTS):
                layer = path.parent == project / ".codex"
                if not ours and layer and not project_trusted(server.config(project), project):
                    return TrustResult((), untrusted_project_advice(project))
                found = len(ours)
                return TrustResult(
                    tuple(ours),
                    f"Codex lists {found} of ctxrelay's {len(EVENTS)} hooks from {path}",
                )
            wrote = _settle(server, project, home)
            ours = our_entries(server.hooks(project).hooks, path)
            pending = [h for h in ours if h.trust != "trusted"]
            if pending:
                server.write([trust_edit(pending)])
                wrote = True
            after = tuple(our_entries(server.hooks(project).hooks, path))
    except ConfigError as exc:
        return TrustResult((), str(exc))
    bad = [h for h in after if h.trust != "trusted"]
    if bad:
        return TrustResult(after, f"Codex still reports {bad[0].key} as {bad[0].trust}", wrote)
    return TrustResult(after, wrote=wrote)


def untrust(codex: Path, home: Path, project: Path, path: Path) -> str | None:
    """Remove the trust records of ctxrelay's hooks of ``path`` (while they are still
    listed, so their places are known); the problem, if any."""
    try:
        with AppServer(codex, codex_env(home), cwd=project) as server:
            listed = our_entries(server.hooks(project).hooks, path)
            ours = [h for h in listed if h.trust != "untrusted"]
            if ours:
                server.write([untrust_edit(h.key) for h in ours])
    except ConfigError as exc:
        return str(exc)
    return None


def settle(codex: Path, home: Path, project: Path) -> str | None:
    """After ctxrelay's hooks left: the records of the hooks that moved up in their
    place follow them, stale ones go (:func:`stale_trust_edits`), and the
    ``hooks.state`` table goes when that leaves it empty, as it was before; the problem,
    if any."""
    try:
        with AppServer(codex, codex_env(home), cwd=project) as server:
            _settle(server, project, home)
            for table in ("hooks.state", "hooks"):
                value: Any = server.user_config(project)
                for part in table.split("."):
                    value = value.get(part) if isinstance(value, dict) else None
                if value == {}:
                    server.write([{"keyPath": table, "value": None, "mergeStrategy": "replace"}])
    except ConfigError as exc:
        return str(exc)
    return None


@contextmanager
def _mode_kept(path: Path) -> Iterator[None]:
    """Codex's config writes leave ``config.toml`` at mode 0600 (0.171): the user's mode
    of an existing file is put back after them."""
    try:
        mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        mode = None
    try:
        yield
    finally:
        if mode is not None:
            with suppress(OSError):
                if stat.S_IMODE(path.stat().st_mode) != mode:
                    path.chmod(mode)


def config_toml(home: Path) -> Path:
    """The user's ``config.toml``, where Codex records hook trust."""
    return home / "config.toml"


def layer_config(scope: str, project: Path, home: Path) -> Path:
    """The ``config.toml`` of the ``scope`` layer, whose ``[hooks]`` tables Codex loads
    beside that layer's ``hooks.json``."""
    return config_toml(home) if scope == "user" else project / ".codex" / "config.toml"


def inline_hooks(config: Path) -> list[str]:
    """The events ``config`` defines hooks for in its ``[hooks]`` tables (``hooks.state``,
    the trust records, is no hook); empty when it has none or cannot be read."""
    try:
        with open(config, "rb") as handle:
            hooks = tomllib.load(handle).get("hooks")
    except (OSError, tomllib.TOMLDecodeError):
        return []
    if not isinstance(hooks, dict):
        return []
    return [event for event, groups in hooks.items() if event != "state" and groups]


def _two_forms(scope: str, project: Path, home: Path, path: Path) -> str | None:
    """Why the ``scope`` layer would hold hooks in both forms, which makes Codex warn on
    every run ("loading hooks from both …"); ``None`` when it would not. Raises
    :class:`ConfigError`, before anything is written, where install would be the one
    to mix them (``hooks.json`` holds no hook yet)."""
    config = layer_config(scope, project, home)
    events = inline_hooks(config)
    if not events:
        return None
    what = (
        f"{config} defines hooks in [hooks] ({', '.join(events)}), and Codex warns on every "
        f'run when one layer also has {path.name} ("loading hooks from both")'
    )
    hooks = load_json(path).get("hooks")
    if not (isinstance(hooks, dict) and any(hooks.values())):
        other = "--user" if scope == "project" else f"--project-dir {project}"
        raise ConfigError(
            f"not installed: {what}; move those tables into {path} as JSON (the same "
            f"format), or install into the other layer ({other}), then run install again"
        )
    return f"{what}: move those tables into {path} as JSON (the same format)"


def install_hooks(
    scope: str, project: Path, home: Path, command: str, codex: Path | None
) -> InstallResult:
    """Install into the ``scope`` layer, then trust through ``codex`` (the CLI; ``None``
    when there is none: the result then says what to trust and where)."""
    path = hooks_path(scope, project, home)
    mixed = _two_forms(scope, project, home, path)
    manifest = _manifest(path)
    manifest.data.setdefault("config_existed", config_toml(home).exists())
    result = _install(manifest, path, command)
    if mixed is not None:
        result.notes.append(mixed)
    if codex is None:
        result.trust = TrustResult((), "the Codex CLI was not found")
    else:
        with _mode_kept(config_toml(home)):
            result.trust = trust(codex, home, project, path)
        result.changed = result.changed or result.trust.wrote
    # A project Codex does not trust loads none of it: the install says so and leaves
    # the user's config.toml as it was (no MCP server for hooks that cannot run).
    refused = not result.trust.ok and "trusted project" in (result.trust.problem or "")
    if not result.trust.ok and not refused:
        result.notes.append(trust_advice(path))
    # After the trust records: Codex's own writes of config.toml come first, and the
    # block stays as appended, for uninstall to take out byte for byte.
    added = None if refused else mcp.register(config_toml(home), ctxrelay_command())
    if added is not None:
        manifest.data["mcp_block"] = added
        manifest.save()
        result.changed = True
        result.notes.append(
            f"session_history is served to Codex as [mcp_servers.{SERVER_NAME}] in "
            f"{config_toml(home)}"
        )
    if result.changed:
        result.notes.append("restart a running codex: it reads hooks when a session starts")
    return result


def uninstall_hooks(scope: str, project: Path, home: Path, codex: Path | None) -> InstallResult:
    """Remove the trust records (through ``codex``), then the hooks, then a
    ``config.toml`` install created that holds nothing now."""
    path = hooks_path(scope, project, home)
    manifest = _manifest(path)
    created = manifest.data.get("config_existed") is False
    with _mode_kept(config_toml(home)):
        problem = None if codex is None else untrust(codex, home, project, path)
        added = manifest.data.get("mcp_block")
        result_mcp = None
        if isinstance(added, str):
            if mcp.unregister(config_toml(home), added):
                result_mcp = f"removed [mcp_servers.{SERVER_NAME}] from {config_toml(home)}"
            else:
                result_mcp = (
                    f"[mcp_servers.{SERVER_NAME}] in {config_toml(home)} was changed since "
                    "install: left as it is"
                )
    result = _uninstall(manifest, path)
    if codex is not None and problem is None:
        with _mode_kept(config_toml(home)):
            problem = settle(codex, home, project)
    if result_mcp is not None:
        result.notes.append(result_mcp)
        result.changed = True
    if problem is not None:
        result.notes.append(
            f"the trust records of ctxrelay's hooks may remain in {config_toml(home)} ({problem})"
        )
    config = config_toml(home)
    if created and config.exists() and not config.read_text(encoding="utf-8").strip():
        config.unlink()
        result.changed = True
    manifest.remove()  # last: a folder install created goes once empty
    return result
