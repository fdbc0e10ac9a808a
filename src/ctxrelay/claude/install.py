"""Install the plugin through Claude Code's settings, and remove exactly that again
(the commands: ``ctxrelay claude install | uninstall``, :mod:`ctxrelay.cli.claude`).

:func:`install` merges the settings snippet (:func:`ctxrelay.claude._snippet.snippet`: the
environment and the hooks) into Claude Code's ``settings.json`` of the project
(``.claude/settings.json``, the default) or of the user (``~/.claude/settings.json``),
and copies the plugin's agents (and skills) beside it. It is idempotent, keeps a
backup of the file it changes, and refuses to touch a settings file it cannot parse.
What it added (and what each key held before) is recorded in ``ctxrelay-install.json``
next to the settings, so ``uninstall`` removes exactly that and restores the rest.

The merge is data-driven (:data:`MERGE_RULES`): ``hooks`` gets our groups appended to
each event's list; ``env`` gets our keys set; any other key of the snippet (e.g.
``statusLine``) is set whole. A new key in the snippet needs no new code here.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxrelay.claude._snippet import (
    CTXRELAY_COMMAND,
    HOOK_COMMAND,
    plugin_dir,
    snippet,
    statusline_command,
)
from ctxrelay.claude.handoff import INSTALLED_SKILL
from ctxrelay.errors import ConfigError

__all__ = [
    "BARE",
    "COPIED_DIRS",
    "MANIFEST_NAME",
    "MERGE_RULES",
    "Commands",
    "InstallResult",
    "choose_commands",
    "install",
    "load_settings",
    "merge_settings",
    "settings_path",
    "uninstall",
    "unmerge_settings",
]

MANIFEST_NAME = "ctxrelay-install.json"
"""What install added, next to the settings file it changed."""

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
        return snippet(self.hook, self.ctxrelay)


BARE = Commands(HOOK_COMMAND, CTXRELAY_COMMAND)
"""The commands by name, found on ``PATH``: what the shipped snippet says, and what
installs before absolute commands wrote."""


def choose_commands(hook: str | None = None, ctxrelay: str | None = None) -> Commands:
    """The commands to install: ``hook`` and ``ctxrelay`` when given (``--command``,
    ``--ctxrelay``), else this environment's, the fastest hook launcher that works
    (:mod:`ctxrelay.claude.launcher`). Each is run on a real payload first; one that
    does not work is a :class:`ConfigError` saying what to do, and nothing is written."""
    from ctxrelay.claude import launcher, probe

    if hook is not None:
        check = probe.check_hook(hook, runs=1)
        if not check.ok:
            raise ConfigError(
                f"the hook command {hook!r} does not work ({check.detail}); fix it, or "
                "leave out --command to use this environment's ctxrelay"
            )
    else:
        tried: list[str] = []
        for candidate in launcher.hook_candidates():
            check = probe.check_hook(candidate, runs=1)
            if check.ok:
                hook = candidate
                break
            tried.append(check.detail)
        if hook is None:
            raise ConfigError(
                f"this environment cannot run ctxrelay's hook ({tried[0]}); reinstall "
                "ctxrelay (pipx install '.[claude]' in a clone of its repository) and run "
                "install with that ctxrelay, or pass --command with a hook command that works"
            )
    ctxrelay = launcher.ctxrelay_command() if ctxrelay is None else ctxrelay
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

    def as_json(self) -> dict[str, Any]:
        return {
            "settings": str(self.settings),
            "changed": self.changed,
            "backup": None if self.backup is None else str(self.backup),
            "files_added": self.files_added,
            "files_kept": self.files_kept,
            "files_removed": self.files_removed,
        }


def settings_path(scope: str, project: Path, home: Path) -> Path:
    base = home if scope == "user" else project
    return base / ".claude" / "settings.json"


MERGE_RULES: dict[str, str] = {"hooks": "hooks", "env": "keys"}
"""How each snippet key merges: ``hooks`` appends our groups to each event's list,
``keys`` sets our sub-keys of an object; every other key is set whole (``value``)."""


def _is_hook_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, list) for v in value.values())


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
        if rule == "hooks":
            if key in merged and not _is_hook_map(have):
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
                "kind": "hooks",
                "created": key not in current,
                "added": added,
                "new_events": new_events,
            }
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
        if rule == "hooks" and isinstance(have, dict):
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


def install(settings: Path, commands: Commands = BARE) -> InstallResult:
    """Merge the snippet of ``commands`` into ``settings`` and copy the plugin's agents
    and skills into its directory. Safe to run again: nothing changes the second time;
    with other commands (another environment, ``--command``), what the earlier install
    merged is replaced, never doubled."""
    add = commands.snippet()
    current = load_settings(settings)
    manifest_path = settings.with_name(MANIFEST_NAME)
    manifest = load_settings(manifest_path) if manifest_path.exists() else {}
    before = _installed_snippet(manifest)
    base = current
    rebased = before is not None and before != add
    if rebased:
        assert before is not None
        base = unmerge_settings(current, before, _obj(manifest.get("settings")))
    merged, record = merge_settings(base, add)
    result = InstallResult(settings, changed=False)
    if merged != current:
        result.backup = _backup(settings)
        _write_json(settings, merged)
        result.changed = True
    if rebased or "settings" not in manifest:
        manifest["settings"] = record
    elif merged != current:
        # A second install records nothing new; keep the first install's record of what
        # each key held before ctxrelay.
        old = _obj(manifest.get("settings"))
        manifest["settings"] = {**record, **{k: v for k, v in old.items() if k in record}}
    manifest["snippet"] = add
    manifest["commands"] = {"hook": commands.hook, "ctxrelay": commands.ctxrelay}
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
    """Remove exactly what :func:`install` added (files only while unchanged)."""
    current = load_settings(settings)
    manifest_path = settings.with_name(MANIFEST_NAME)
    manifest = load_settings(manifest_path) if manifest_path.exists() else {}
    add = _installed_snippet(manifest) or BARE.snippet()
    record = manifest.get("settings") if isinstance(manifest.get("settings"), dict) else None
    result = InstallResult(settings, changed=False)
    if settings.exists():
        restored = unmerge_settings(current, add, record)
        if restored != current:
            result.backup = _backup(settings)
            _write_json(settings, restored)
            result.changed = True
    files = _obj(manifest.get("files"))
    for rel, digest in sorted(files.items()):
        dest = settings.parent / rel
        if dest.is_file() and _digest(dest) == digest:
            _remove_file(settings, rel)
            result.files_removed.append(rel)
            result.changed = True
        elif dest.exists():
            result.files_kept.append(rel)
    manifest_path.unlink(missing_ok=True)
    return result
