"""Install ctxrelay's hooks into Codex's ``hooks.json``, trust them the way Codex's own
``/hooks`` screen does, and remove exactly that again (``ctxrelay codex install |
uninstall``, :mod:`ctxrelay.cli.codex`).

The hooks go to the user layer (``$CODEX_HOME/hooks.json``) or the project layer
(``<project>/.codex/hooks.json``), never to ``[hooks]`` in ``config.toml`` (both forms
in one layer make Codex warn on every run). Our groups are appended to each event's
list, so the positions (and so the trust keys) of the user's own hooks do not move.
What the file held before is recorded in ``ctxrelay-install.json`` beside it: uninstall
puts back the very bytes it found (or removes a file that was not there) when the file
is still as install left it, and otherwise removes only our groups.

Trust: :func:`trust` asks ``codex app-server`` for the hooks as Codex sees them
(``hooks/list``), records the ``currentHash`` Codex reported for each of ours
(``config/batchWrite``, into the user's ``config.toml``), and lists again, requiring
``trusted`` for each. ctxrelay never computes a hash and never passes a bypass flag.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxrelay.budget.bounds import HOOK_TIMEOUT_S
from ctxrelay.codex.config import codex_home
from ctxrelay.codex.setup.appserver import AppServer, HookEntry, trust_edit, untrust_edit
from ctxrelay.codex.setup.launcher import is_ours
from ctxrelay.errors import ConfigError
from ctxrelay.hooks.install.launch import choose_hook

__all__ = [
    "EVENTS",
    "MANIFEST_NAME",
    "InstallResult",
    "TrustResult",
    "choose_command",
    "codex_env",
    "codex_home",
    "config_toml",
    "hooks_config",
    "hooks_path",
    "install",
    "install_hooks",
    "load_hooks",
    "our_entries",
    "project_trusted",
    "trust",
    "trust_advice",
    "uninstall",
    "uninstall_hooks",
    "untrust",
    "untrusted_project_advice",
]

MANIFEST_NAME = "ctxrelay-install.json"
"""What install found and wrote, next to the ``hooks.json`` it changed."""

EVENTS: Mapping[str, str | None] = {
    "PreToolUse": "Bash",
    "PostToolUse": "Bash",
    "PostCompact": None,
    "Stop": None,
    "SessionStart": None,
}
"""The events ctxrelay's hook answers on Codex, with their matcher (Codex matches the
hook-visible tool name, ``Bash`` for its shell, by a full regex match)."""


def codex_env(home: Path) -> dict[str, str]:
    """This process's environment with ``CODEX_HOME`` set to ``home``."""
    return dict(os.environ, CODEX_HOME=str(home))


def hooks_path(scope: str, project: Path, home: Path) -> Path:
    """The ``hooks.json`` of the user layer (``home``) or of ``project``'s layer."""
    return home / "hooks.json" if scope == "user" else project / ".codex" / "hooks.json"


def hooks_config(command: str) -> dict[str, list[dict[str, Any]]]:
    """ctxrelay's groups for each event, running ``command``."""
    config: dict[str, list[dict[str, Any]]] = {}
    for event, matcher in EVENTS.items():
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        group["hooks"] = [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}]
        config[event] = [group]
    return config


def choose_command(command: str | None = None) -> str:
    """The hook command to install: ``command`` when given, else the first of this
    environment's that works. Each is run on real payloads of every event first (the
    ``PreToolUse`` ones include a command only the guard's shell parser judges); one that
    does not work is a :class:`ConfigError`, and nothing is written
    (:func:`ctxrelay.hooks.install.launch.choose_hook`)."""
    from ctxrelay.codex.setup import launcher, probe

    return choose_hook(
        command,
        launcher.hook_candidates(),
        lambda candidate: probe.check_every_event(candidate, list(EVENTS)),
        reinstall="pipx install '.[guard]' in a clone of its repository",
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

    @property
    def ok(self) -> bool:
        return self.problem is None and all(h.trust == "trusted" for h in self.hooks)

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "problem": self.problem,
            "hooks": [{"key": h.key, "event": h.event, "trust": h.trust} for h in self.hooks],
        }


def load_hooks(path: Path) -> tuple[str | None, dict[str, Any]]:
    """The file's text (``None`` when there is none) and its hooks object. Refuses, in
    one sentence and changing nothing, anything that is not Codex's hooks format."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path} ({exc}); nothing was changed") from None
    if not text.strip():
        return text, {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"cannot parse {path} as JSON ({exc}); nothing was changed") from None
    hooks = data.get("hooks", {}) if isinstance(data, dict) else None
    if not isinstance(hooks, dict) or not all(isinstance(v, list) for v in hooks.values()):
        raise ConfigError(
            f'{path} is not a hooks file ({{"hooks": {{event: [groups]}}}}); nothing was changed'
        )
    return text, data


def _is_our_group(group: object) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(
        isinstance(h, dict) and is_ours(h.get("command")) for h in hooks
    )


def _without_ours(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with every group of ctxrelay's removed, and the events left empty by that."""
    out: dict[str, Any] = json.loads(json.dumps(data))
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        kept = [g for g in hooks[event] if not _is_our_group(g)]
        if len(kept) != len(hooks[event]):
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if not hooks:
        del out["hooks"]
    return out


def _dump(data: Mapping[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _manifest(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.with_name(MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def install(path: Path, command: str) -> InstallResult:
    """Append ctxrelay's groups running ``command`` to ``path`` (replacing the groups of
    an earlier install, never doubling them). Safe to run again."""
    text, data = load_hooks(path)
    manifest = _manifest(path)
    merged = _without_ours(data)
    hooks = merged.setdefault("hooks", {})
    for event, groups in hooks_config(command).items():
        hooks.setdefault(event, []).extend(groups)
    result = InstallResult(path, changed=False, command=command)
    if "found" not in manifest:  # the first install: what was there before ctxrelay
        manifest["found"] = {"text": text, "dir_existed": path.parent.is_dir()}
    if merged != data or text is None:
        new_text = _dump(merged)
        _write(path, new_text)
        result.changed = True
    else:
        new_text = text
    manifest["written"] = new_text
    manifest["command"] = command
    manifest["version"] = 1
    _write(path.with_name(MANIFEST_NAME), _dump(manifest))
    return result


def uninstall(path: Path) -> InstallResult:
    """Remove what :func:`install` added: the file as it was found when nothing else
    changed it since, else only ctxrelay's groups."""
    manifest = _manifest(path)
    text, data = load_hooks(path)
    result = InstallResult(path, changed=False)
    found = manifest.get("found") if isinstance(manifest.get("found"), dict) else None
    if found is not None and text is not None and text == manifest.get("written"):
        before = found.get("text")
        if isinstance(before, str):
            _write(path, before)
        else:
            path.unlink()
        result.changed = True
    elif text is not None:
        restored = _without_ours(data)
        if restored != data:
            if restored or found is None or found.get("text") is not None:
                _write(path, _dump(restored))
            else:
                path.unlink()  # nothing of the user's in a file install created
            result.changed = True
            result.notes.append(f"{path} changed since install: only ctxrelay's hooks were removed")
    path.with_name(MANIFEST_NAME).unlink(missing_ok=True)
    if found is not None and not found.get("dir_existed", True):
        with contextlib.suppress(OSError):
            path.parent.rmdir()  # only when empty
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
            pending = [h for h in ours if h.trust != "trusted"]
            if pending:
                server.write([trust_edit(pending)])
            after = tuple(our_entries(server.hooks(project).hooks, path))
    except ConfigError as exc:
        return TrustResult((), str(exc))
    bad = [h for h in after if h.trust != "trusted"]
    if bad:
        return TrustResult(after, f"Codex still reports {bad[0].key} as {bad[0].trust}")
    return TrustResult(after)


def untrust(codex: Path, home: Path, project: Path, path: Path) -> str | None:
    """Remove the trust records of ctxrelay's hooks of ``path`` (and the ``hooks.state``
    table when that leaves it empty, as it was before); the problem, if any."""
    try:
        with AppServer(codex, codex_env(home), cwd=project) as server:
            listed = our_entries(server.hooks(project).hooks, path)
            ours = [h for h in listed if h.trust != "untrusted"]
            if ours:
                server.write([untrust_edit(h.key) for h in ours])
            for table in ("hooks.state", "hooks"):
                value: Any = server.user_config(project)
                for part in table.split("."):
                    value = value.get(part) if isinstance(value, dict) else None
                if value == {}:
                    server.write([{"keyPath": table, "value": None, "mergeStrategy": "replace"}])
    except ConfigError as exc:
        return str(exc)
    return None


def config_toml(home: Path) -> Path:
    """The user's ``config.toml``, where Codex records hook trust."""
    return home / "config.toml"


def install_hooks(
    scope: str, project: Path, home: Path, command: str, codex: Path | None
) -> InstallResult:
    """Install into the ``scope`` layer, then trust through ``codex`` (the CLI; ``None``
    when there is none: the result then says what to trust and where)."""
    path = hooks_path(scope, project, home)
    config = config_toml(home)
    config_existed = config.exists()
    result = install(path, command)
    manifest = _manifest(path)
    manifest.setdefault("config_existed", config_existed)
    _write(path.with_name(MANIFEST_NAME), _dump(manifest))
    if codex is None:
        result.trust = TrustResult((), "the Codex CLI was not found")
    else:
        result.trust = trust(codex, home, project, path)
    if not result.trust.ok:
        problem = result.trust.problem or ""
        if "trusted project" not in problem:
            result.notes.append(trust_advice(path))
    result.notes.append("restart a running codex: it reads hooks when a session starts")
    return result


def uninstall_hooks(scope: str, project: Path, home: Path, codex: Path | None) -> InstallResult:
    """Remove the trust records (through ``codex``), then the hooks, then a
    ``config.toml`` install created that holds nothing now."""
    path = hooks_path(scope, project, home)
    manifest = _manifest(path)
    problem = None if codex is None else untrust(codex, home, project, path)
    result = uninstall(path)
    if problem is not None:
        result.notes.append(
            f"the trust records of ctxrelay's hooks may remain in {config_toml(home)} ({problem})"
        )
    config = config_toml(home)
    created = manifest.get("config_existed") is False and config.exists()
    if created and not config.read_text(encoding="utf-8").strip():
        config.unlink()
        result.changed = True
    return result
