"""Install the plugin through Claude Code's settings, and remove exactly that again
(the commands: ``ctxrelay claude install | uninstall``, :mod:`ctxrelay.cli.claude`).

:func:`install` merges the settings snippet (:func:`ctxrelay.claude.setup._snippet.snippet`: the
environment and the hooks) into Claude Code's ``settings.json`` of the project
(``.claude/settings.json``, the default) or of the user (``~/.claude/settings.json``),
and copies the plugin's agents (and skills) beside it. It is idempotent, keeps a
backup of the file it changes, and refuses to touch a settings file it cannot parse.
What it added (and what each key held before) is recorded in ``ctxrelay-install.json``
next to the settings, so ``uninstall`` removes exactly that and restores the rest.

The merge is data-driven (:data:`MERGE_RULES`): ``hooks`` gets our groups appended to
each event's list, ``permissions`` our rule to its ``allow`` list, and
``enabledMcpjsonServers`` our server's name; ``env`` gets our keys set; any other key of
the snippet (e.g. ``statusLine``) is set whole. A new key in the snippet needs no new code
here.

``session_history`` reaches Claude Code as the MCP server ``ctxrelay``
(:mod:`ctxrelay.claude.mcp`): a project install adds it to the project's ``.mcp.json``,
approved by ``enabledMcpjsonServers`` and allowed by ``permissions.allow`` in the
settings, so the model sees ``mcp__ctxrelay__session_history`` with no dialog and no
prompt (``docs/claude-code-facts.md``, "MCP servers"). A user install cannot name a
project's ``.mcp.json``; it says the one command that registers the server for every
project (:func:`mcp_add_command`).

Uninstall leaves the project as install found it: a file install created goes (the
settings, ``.mcp.json``, ``.claude/`` itself once empty), a file whose content is back to
what it was gets its own bytes back (the user's formatting), and at most one backup
remains: the one install made before its first change, and only when the file could not
be put back as it was.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxrelay.claude.handoff import INSTALLED_SKILL
from ctxrelay.claude.mcp import MODEL_TOOL_NAME, SERVER_NAME
from ctxrelay.claude.setup._snippet import (
    CTXRELAY_COMMAND,
    HOOK_COMMAND,
    plugin_dir,
    snippet,
    statusline_command,
)
from ctxrelay.errors import ConfigError
from ctxrelay.hooks.install.launch import choose_hook, ctxrelay_command

__all__ = [
    "BARE",
    "COPIED_DIRS",
    "MANIFEST_NAME",
    "MCP_JSON",
    "MERGE_RULES",
    "Commands",
    "InstallResult",
    "choose_commands",
    "install",
    "load_settings",
    "mcp_add_command",
    "mcp_server_entry",
    "merge_settings",
    "settings_path",
    "uninstall",
    "unmerge_settings",
]

MANIFEST_NAME = "ctxrelay-install.json"
"""What install added, next to the settings file it changed."""

MCP_JSON = ".mcp.json"
"""The project's MCP servers file, at the project's root, where install names the server."""

COPIED_DIRS = ("agents", "skills")
"""Plugin subdirectories copied into the scope's ``.claude/`` (a plugin install brings
them itself; a settings install must copy them)."""

_PLUGIN_SKILL_DIR = "handoff"
"""The handoff skill's directory (and name) in the plugin: ``/ctxrelay:handoff``."""

_ABSENT = {"absent": True}

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
    from ctxrelay.claude.setup import launcher, probe

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


MERGE_RULES: dict[str, str] = {
    "hooks": "lists",
    "permissions": "lists",
    "enabledMcpjsonServers": "list",
    "env": "keys",
}
"""How each snippet key merges: ``lists`` appends our entries to each of an object's lists
(hook groups to an event's, a rule to ``permissions.allow``), ``list`` appends ours to a
list, ``keys`` sets our sub-keys of an object; every other key is set whole (``value``)."""


def load_settings(path: Path) -> dict[str, Any]:
    """The settings as an object; ``{}`` when the file does not exist. Refuses (one
    sentence, nothing changed) anything it cannot parse."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path} ({exc}); nothing was changed") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(
            f"cannot parse {path} as JSON ({exc}); fix it or move it aside and run "
            "this again, nothing was changed"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is not a JSON object; nothing was changed")
    return data


def merge_settings(
    current: dict[str, Any], add: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``current`` with ``add`` merged in, and the record of what was added (with each
    replaced value's previous content, for :func:`unmerge_settings`)."""
    merged: dict[str, Any] = json.loads(json.dumps(current))
    record: dict[str, Any] = {}
    for key, value in add.items():
        have = merged.get(key)
        rule = MERGE_RULES.get(key, "value")
        if rule == "lists":
            if key in merged and not (
                isinstance(have, dict)
                and all(isinstance(have[sub], list) for sub in value if sub in have)
            ):
                raise ConfigError(f"the settings' {key!r} is not an object of lists")
            target = merged.setdefault(key, {})
            added: dict[str, list[Any]] = {}
            new_events = [event for event in value if event not in target]
            for event, groups in value.items():
                lst = target.setdefault(event, [])
                for group in groups:
                    if group not in lst:
                        lst.append(group)
                        added.setdefault(event, []).append(group)
            record[key] = {
                "kind": "lists",
                "created": key not in current,
                "added": added,
                "new_events": new_events,
            }
        elif rule == "list":
            if key in merged and not isinstance(have, list):
                raise ConfigError(f"the settings' {key!r} is not a list")
            items = merged.setdefault(key, [])
            new = [item for item in value if item not in items]
            items.extend(new)
            record[key] = {"kind": "list", "created": key not in current, "added": new}
        elif rule == "keys":
            if key in merged and not isinstance(have, dict):
                raise ConfigError(f"the settings' {key!r} is not an object")
            target = merged.setdefault(key, {})
            previous = {}
            for sub, sub_value in value.items():
                if target.get(sub) != sub_value:
                    previous[sub] = {"was": target[sub]} if sub in target else _ABSENT
                    target[sub] = sub_value
            record[key] = {"kind": "keys", "created": key not in current, "previous": previous}
        elif have != value:
            record[key] = {
                "kind": "value",
                "previous": {"was": have} if key in merged else _ABSENT,
            }
            merged[key] = value
        else:
            record[key] = {"kind": "value", "previous": None}
    return merged, record


def unmerge_settings(
    current: dict[str, Any], add: dict[str, Any], record: dict[str, Any] | None
) -> dict[str, Any]:
    """Remove what :func:`merge_settings` added. Without a record (lost, or a settings
    file copied from elsewhere), remove what equals the snippet and restore nothing.
    A value the user changed since install stays."""
    out: dict[str, Any] = json.loads(json.dumps(current))
    record = record or {}
    for key, value in add.items():
        rec = record.get(key)
        have = out.get(key)
        rule = MERGE_RULES.get(key, "value")
        if rule == "lists" and isinstance(have, dict):
            # With a record, only the groups install appended (one the user had is kept).
            ours = rec.get("added", {}) if isinstance(rec, dict) else value
            new_events = rec.get("new_events", []) if isinstance(rec, dict) else list(value)
            for event, groups in ours.items():
                lst = have.get(event)
                if not isinstance(lst, list):
                    continue
                have[event] = [g for g in lst if g not in groups]
                if not have[event] and event in new_events:
                    del have[event]
            if not have and (rec is None or rec.get("created")):
                del out[key]
        elif rule == "list" and isinstance(have, list):
            theirs = rec.get("added", []) if isinstance(rec, dict) else value
            out[key] = [item for item in have if item not in theirs]
            if not out[key] and (rec is None or rec.get("created")):
                del out[key]
        elif rule == "keys" and isinstance(have, dict):
            previous = rec.get("previous", {}) if isinstance(rec, dict) else None
            for sub, sub_value in value.items():
                if have.get(sub) != sub_value:
                    continue  # changed since install: the user's now
                prev = None if previous is None else previous.get(sub)
                if previous is not None and prev is None:
                    continue  # the user had this very value before install
                if isinstance(prev, dict) and "was" in prev:
                    have[sub] = prev["was"]
                else:
                    del have[sub]
            if not have and (rec is None or rec.get("created")):
                del out[key]
        elif rule == "value" and have == value:
            prev = rec.get("previous") if isinstance(rec, dict) else _ABSENT
            if isinstance(prev, dict) and "was" in prev:
                out[key] = prev["was"]
            elif prev is not None:
                del out[key]
    return out


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _backup(path: Path) -> Path | None:
    if not path.exists():
        return None
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    backup = path.with_name(f"{path.name}.ctxrelay-backup-{stamp}")
    shutil.copy2(path, backup)
    return backup


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


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
    from ctxrelay.claude import automod  # the auto-handoff mod, as a skills-folder plugin

    return found + automod.files()


def _remove_file(settings: Path, rel: str) -> None:
    """Remove one copied file, and its directories up to ``.claude/`` once empty."""
    dest = settings.parent / rel
    dest.unlink()
    for parent in dest.parents:
        if parent == settings.parent:
            break
        try:
            parent.rmdir()  # only when empty
        except OSError:
            break


def _installed_snippet(manifest: dict[str, Any]) -> dict[str, Any] | None:
    """What an earlier install merged: its recorded snippet, or (an install from before
    the snippet was recorded) the snippet of :data:`BARE`; ``None`` when none did."""
    if "settings" not in manifest:
        return None
    recorded = manifest.get("snippet")
    return recorded if isinstance(recorded, dict) else BARE.snippet()


def _changes(record: dict[str, Any]) -> list[str]:
    """What a merge changed, one sentence each (from :func:`merge_settings`' record)."""
    out: list[str] = []
    for key, rec in record.items():
        kind = rec.get("kind")
        if kind == "lists" and rec.get("added"):
            if key == "hooks":
                out.append(f"hooks added for {', '.join(rec['added'])}")
            else:
                for sub, items in rec["added"].items():
                    out.append(f"{key}.{sub}: added {', '.join(map(str, items))}")
        elif kind == "list" and rec.get("added"):
            out.append(f"{key}: added {', '.join(map(str, rec['added']))}")
        elif kind == "keys":
            for sub, prev in rec.get("previous", {}).items():
                was = f" (it was {prev['was']!r})" if "was" in prev else ""
                out.append(f"{key} {sub} set{was}")
        elif kind == "value" and rec.get("previous") is not None:
            prev = rec["previous"]
            if "was" in prev:
                was = prev["was"]
                what = was.get("command") if isinstance(was, dict) else None
                shown = f" {what}" if isinstance(what, str) else ""
                out.append(f"{key} replaced (yours was{shown}; uninstall restores it)")
            else:
                out.append(f"{key} set")
    return out


def _recorded_backup(manifest: dict[str, Any]) -> Path | None:
    backup = manifest.get("backup")
    return Path(backup) if isinstance(backup, str) and Path(backup).is_file() else None


def _merge_mcp_json(path: Path, entry: dict[str, Any], manifest: dict[str, Any]) -> bool:
    """Name the server in the project's ``.mcp.json``; what it held before is recorded
    in ``manifest["mcp_json"]`` (first install only). Whether the file changed."""
    current = load_settings(path)
    servers = current.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"the 'mcpServers' of {path} is not an object; nothing was changed")
    rec = _obj(manifest.get("mcp_json"))
    if not rec:
        text = path.read_text(encoding="utf-8") if path.exists() else None
        rec = {"created": text is None, "text": text}
        rec["previous"] = {"was": servers[SERVER_NAME]} if SERVER_NAME in servers else _ABSENT
    rec["path"] = str(path)
    rec["entry"] = entry
    manifest["mcp_json"] = rec
    if servers.get(SERVER_NAME) == entry:
        return False
    _write_json(path, {**current, "mcpServers": {**servers, SERVER_NAME: entry}})
    return True


def _restore(path: Path, data: dict[str, Any], original: str | None) -> None:
    """Write ``data`` to ``path``: the ``original`` bytes when they hold the same data
    (the user's formatting back), else JSON."""
    if original is not None:
        try:
            same = json.loads(original) == data
        except ValueError:
            same = False
        if same:
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(original, encoding="utf-8")
            os.replace(tmp, path)
            return
    _write_json(path, data)


def _unmerge_mcp_json(rec: dict[str, Any]) -> str | None:
    """Take the server out of ``.mcp.json`` again; a sentence when the file changed."""
    path = Path(rec.get("path", ""))
    entry = rec.get("entry")
    if not rec.get("path") or not path.is_file():
        return None
    current = load_settings(path)
    servers = current.get("mcpServers")
    if not isinstance(servers, dict) or servers.get(SERVER_NAME) != entry:
        return None  # not ours any more: the user changed it
    servers = dict(servers)
    prev = _obj(rec.get("previous"))
    if "was" in prev:
        servers[SERVER_NAME] = prev["was"]
    else:
        del servers[SERVER_NAME]
    restored = {**current, "mcpServers": servers}
    if not servers and (rec.get("created") or "mcpServers" not in _original(rec)):
        del restored["mcpServers"]
    if not restored and rec.get("created"):
        path.unlink()
        return f"removed {path} (install created it)"
    text = rec.get("text")
    _restore(path, restored, text if isinstance(text, str) else None)
    return f"the MCP server {SERVER_NAME} taken out of {path}"


def _original(rec: dict[str, Any]) -> dict[str, Any]:
    text = rec.get("text")
    try:
        data = json.loads(text) if isinstance(text, str) else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def install(
    settings: Path, commands: Commands = BARE, *, mcp_json: Path | None = None
) -> InstallResult:
    """Merge the snippet of ``commands`` into ``settings`` and copy the plugin's agents
    and skills into its directory; with ``mcp_json`` (a project install: the project's
    ``.mcp.json``), name the MCP server there. Safe to run again: nothing changes the
    second time; with other commands (another environment, ``--command``), what the
    earlier install merged is replaced, never doubled."""
    add = commands.snippet()
    current = load_settings(settings)
    manifest_path = settings.with_name(MANIFEST_NAME)
    manifest = load_settings(manifest_path) if manifest_path.exists() else {}
    if "created" not in manifest:  # what this install cycle found missing
        manifest["created"] = {
            "settings": not settings.exists(),
            "dir": not settings.parent.exists(),
        }
    before = _installed_snippet(manifest)
    base = current
    rebased = before is not None and before != add
    if rebased:
        assert before is not None
        base = unmerge_settings(current, before, _obj(manifest.get("settings")))
    merged, record = merge_settings(base, add)
    result = InstallResult(settings, changed=False)
    if merged != current:
        if _recorded_backup(manifest) is None and settings.exists():
            # One backup an install cycle: the file as ctxrelay first found it.
            result.backup = _backup(settings)
            manifest["backup"] = str(result.backup)
        _write_json(settings, merged)
        result.changed = True
        result.changes = _changes(record)
    if rebased or "settings" not in manifest:
        manifest["settings"] = record
    elif merged != current:
        # A second install records nothing new; keep the first install's record of what
        # each key held before ctxrelay.
        old = _obj(manifest.get("settings"))
        manifest["settings"] = {**record, **{k: v for k, v in old.items() if k in record}}
    manifest["snippet"] = add
    manifest["commands"] = {"hook": commands.hook, "ctxrelay": commands.ctxrelay}
    if mcp_json is not None:
        if _merge_mcp_json(mcp_json, mcp_server_entry(commands.ctxrelay), manifest):
            result.changed = True
            result.changes.append(f"the MCP server {SERVER_NAME} named in {mcp_json}")
    else:
        result.todo.append(
            "session_history needs the MCP server in every project; register it once with: "
            + mcp_add_command(commands.ctxrelay)
        )
    files = _obj(manifest.get("files"))
    shipped = _plugin_files(commands.ctxrelay)
    for rel, content in shipped:
        dest = settings.parent / rel
        digest = hashlib.sha256(content).hexdigest()
        if dest.exists():
            have = _digest(dest)
            if have == digest:
                files.setdefault(rel, digest)
                continue
            if have != files.get(rel):
                result.files_kept.append(rel)  # the user's own file of that name
                continue
            # Ours, unchanged since an earlier install wrote it: this install's copy.
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(content)
        files[rel] = digest
        result.files_added.append(rel)
        result.changed = True
    # A file an earlier version copied and this one no longer ships (the handoff skill
    # once installed as skills/handoff/) goes, while unchanged.
    for rel in sorted(set(files) - {rel for rel, _ in shipped}):
        dest = settings.parent / rel
        if dest.is_file() and _digest(dest) == files[rel]:
            _remove_file(settings, rel)
            result.files_removed.append(rel)
            result.changed = True
        if not dest.exists():
            del files[rel]
    manifest["files"] = files
    manifest["version"] = 1
    _write_json(manifest_path, manifest)
    return result


def uninstall(settings: Path) -> InstallResult:
    """Remove exactly what :func:`install` added (files only while unchanged), and leave
    the project as install found it: see the module doc."""
    current = load_settings(settings)
    manifest_path = settings.with_name(MANIFEST_NAME)
    manifest = load_settings(manifest_path) if manifest_path.exists() else {}
    add = _installed_snippet(manifest) or BARE.snippet()
    record = manifest.get("settings") if isinstance(manifest.get("settings"), dict) else None
    created = _obj(manifest.get("created"))
    backup = _recorded_backup(manifest)
    result = InstallResult(settings, changed=False)
    if settings.exists():
        restored = unmerge_settings(current, add, record)
        if not restored and created.get("settings"):
            settings.unlink()
            result.changed = True
            result.changes.append(f"removed {settings} (install created it)")
        elif restored != current:
            original = backup.read_text(encoding="utf-8") if backup is not None else None
            if backup is None:
                result.backup = _backup(settings)
            _restore(settings, restored, original)
            result.changed = True
            result.changes.append(f"ctxrelay's settings taken out of {settings}")
        if backup is not None and (not settings.exists() or _same_file(settings, backup)):
            backup.unlink()  # the file is as it was: its backup has nothing more to give
        elif backup is not None:
            result.backup = backup
    files = _obj(manifest.get("files"))
    for rel, digest in sorted(files.items()):
        dest = settings.parent / rel
        if dest.is_file() and _digest(dest) == digest:
            _remove_file(settings, rel)
            result.files_removed.append(rel)
            result.changed = True
        elif dest.exists():
            result.files_kept.append(rel)
    mcp = _obj(manifest.get("mcp_json"))
    said = _unmerge_mcp_json(mcp) if mcp else None
    if said:
        result.changes.append(said)
        result.changed = True
    manifest_path.unlink(missing_ok=True)
    if created.get("dir"):
        with contextlib.suppress(OSError):
            settings.parent.rmdir()  # only when empty: install made it
    return result


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.read_bytes() == b.read_bytes()
    except OSError:
        return False
