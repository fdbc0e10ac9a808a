"""``ctxrelay claude install | uninstall | doctor``.

``install`` merges the settings snippet (:func:`ctxrelay.claude._snippet.snippet`: the
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
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxrelay.claude._snippet import HOOK_COMMAND, plugin_dir, snippet
from ctxrelay.claude.cli import cli_path
from ctxrelay.claude.handoff import INSTALLED_SKILL
from ctxrelay.cli._common import ArgumentParser, handle_errors, print_json
from ctxrelay.errors import ConfigError

__all__ = [
    "COPIED_DIRS",
    "MANIFEST_NAME",
    "MERGE_RULES",
    "InstallResult",
    "install",
    "main",
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


def _load(path: Path) -> dict[str, Any]:
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


def _installed_as(rel: str, content: bytes) -> tuple[str, bytes]:
    """Where a plugin file goes in ``.claude/``, and its content there. The handoff skill
    becomes ``skills/ctxrelay-handoff/`` named ``ctxrelay-handoff``: Claude Code runs an
    installed skill by its own name (``/ctxrelay-handoff``), not by the plugin's
    ``/ctxrelay:handoff``, and the prefix keeps a skill of yours called ``handoff``."""
    prefix = f"skills/{_PLUGIN_SKILL_DIR}/"
    if not rel.startswith(prefix):
        return rel, content
    rel = f"skills/{INSTALLED_SKILL}/{rel[len(prefix) :]}"
    if rel.endswith("/SKILL.md"):
        content = re.sub(
            rb"(?m)^name:[ \t]*" + re.escape(_PLUGIN_SKILL_DIR.encode()) + rb"[ \t]*$",
            b"name: " + INSTALLED_SKILL.encode(),
            content,
            count=1,
        )
    return rel, content


def _plugin_files() -> list[tuple[str, bytes]]:
    """Each file install copies: its path under the scope's ``.claude/``, its content."""
    root = plugin_dir()
    found: list[tuple[str, bytes]] = []
    for sub in COPIED_DIRS:
        base = root / sub
        if base.is_dir():
            found += [
                _installed_as(p.relative_to(root).as_posix(), p.read_bytes())
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


def install(settings: Path, add: dict[str, Any] | None = None) -> InstallResult:
    """Merge the snippet into ``settings`` and copy the plugin's agents and skills into
    its directory. Safe to run again: nothing changes the second time."""
    add = snippet() if add is None else add
    current = _load(settings)
    manifest_path = settings.with_name(MANIFEST_NAME)
    manifest = _load(manifest_path) if manifest_path.exists() else {}
    merged, record = merge_settings(current, add)
    result = InstallResult(settings, changed=False)
    if merged != current:
        result.backup = _backup(settings)
        _write_json(settings, merged)
        result.changed = True
        # A second install records nothing new; keep the first install's record of what
        # each key held before ctxrelay.
        old = _obj(manifest.get("settings"))
        manifest["settings"] = {**record, **{k: v for k, v in old.items() if k in record}}
    elif "settings" not in manifest:
        manifest["settings"] = record
    files = _obj(manifest.get("files"))
    shipped = _plugin_files()
    for rel, content in shipped:
        dest = settings.parent / rel
        digest = hashlib.sha256(content).hexdigest()
        if dest.exists():
            if _digest(dest) == digest:
                files.setdefault(rel, digest)
            else:
                result.files_kept.append(rel)  # the user's own file of that name
            continue
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


def uninstall(settings: Path, add: dict[str, Any] | None = None) -> InstallResult:
    """Remove exactly what :func:`install` added (files only while unchanged)."""
    add = snippet() if add is None else add
    current = _load(settings)
    manifest_path = settings.with_name(MANIFEST_NAME)
    manifest = _load(manifest_path) if manifest_path.exists() else {}
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


# -- doctor ---------------------------------------------------------------------------


def _timed(
    argv: list[str], stdin: str, runs: int
) -> tuple[float, subprocess.CompletedProcess[str]]:
    times: list[float] = []
    proc: subprocess.CompletedProcess[str] | None = None
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(
            argv, input=stdin, capture_output=True, text=True, timeout=30, check=False
        )
        times.append(time.perf_counter() - start)
    assert proc is not None
    return statistics.median(times), proc


def doctor(project: Path, home: Path, runs: int = 5) -> dict[str, Any]:
    """What a user needs to know: does the hook run, how fast, which Claude Code."""
    checks: dict[str, Any] = {}
    hook = shutil.which(HOOK_COMMAND)
    checks["hook_command"] = hook
    problems: list[str] = []
    if hook is None:
        problems.append(f"{HOOK_COMMAND} is not on PATH; Claude Code cannot run the hooks")
    else:
        payload = json.dumps(
            {
                "session_id": "ctxrelay-doctor",
                "transcript_path": str(home / ".claude" / "projects" / "none" / "x.jsonl"),
                "hook_event_name": "PostToolUse",
                "agent_id": "doctor",
                "agent_type": "ctxrelay:investigator",
                "tool_name": "Bash",
                "tool_input": {"command": "true"},
                "tool_response": {},
            }
        )
        hook_s, proc = _timed([hook], payload, runs)
        base_s, _ = _timed([sys.executable, "-c", "pass"], "", runs)
        garbage_s, bad = _timed([hook], "{not json", 1)
        del garbage_s
        checks["hook_exit"] = proc.returncode
        checks["hook_ms"] = round(hook_s * 1000, 1)
        checks["python_ms"] = round(base_s * 1000, 1)
        checks["hook_ratio"] = round(hook_s / base_s, 2) if base_s else None
        checks["fails_open"] = bad.returncode == 0 and bad.stdout == ""
        if proc.returncode != 0:
            problems.append(f"the hook exited {proc.returncode}: {proc.stderr.strip()[:200]}")
        if not checks["fails_open"]:
            problems.append("the hook does not fail open on malformed input")
    found = cli_path()
    cli = None if found is None else str(found)
    checks["claude_cli"] = cli
    version = None
    if cli is not None:
        try:
            out = subprocess.run(
                [cli, "--version"], capture_output=True, text=True, timeout=30, check=False
            )
            version = out.stdout.strip().split(" ")[0] or None
        except (OSError, subprocess.SubprocessError):
            version = None
    checks["claude_version"] = version
    if version is None:
        problems.append("no Claude Code CLI found (claude on PATH or claude-agent-sdk)")
    installed = {}
    for scope in ("project", "user"):
        path = settings_path(scope, project, home)
        try:
            current = _load(path)
        except ConfigError as exc:
            problems.append(str(exc))
            continue
        hooks = current.get("hooks")
        ours = json.dumps(hooks).count(f'"{HOOK_COMMAND}"') if isinstance(hooks, dict) else 0
        installed[scope] = {"settings": str(path), "hooks": ours}
    checks["installed"] = installed
    if not any(v["hooks"] for v in installed.values()):
        problems.append("the hooks are in neither settings file (or come from the plugin)")
    checks["problems"] = problems
    checks["ok"] = not [p for p in problems if not p.startswith("the hooks are in neither")]
    return checks


_HELP = {
    "install": """Merge ctxrelay's hooks and settings snippet into Claude Code's settings.json.

examples:
  ctxrelay claude install                          # this project: .claude/settings.json
  ctxrelay claude install --project-dir ../app     # another project
  ctxrelay claude install --user                   # every project: ~/.claude/settings.json

Idempotent; keeps a backup (settings.json.ctxrelay-backup-<time>); refuses a settings
file it cannot parse. Also copies the plugin's agents and skills into .claude/agents/
and .claude/skills/ (a file of yours with the same name is kept); the handoff skill is
then /ctxrelay-handoff.""",
    "uninstall": """Remove exactly what 'ctxrelay claude install' added, restoring what the
snippet replaced (a value changed since install is kept).

examples:
  ctxrelay claude uninstall                        # this project
  ctxrelay claude uninstall --project-dir ../app   # another project
  ctxrelay claude uninstall --user                 # ~/.claude/settings.json

Settings files you changed after install keep your values; a copied agent or skill you
edited is kept and listed.""",
    "doctor": """Check that the hook runs and fails open, how long it takes against a bare
python, which Claude Code is present, and where the hooks are installed.

It exits 0 when the hook works (even if the hooks are not installed yet: that is
reported, not a failure), 1 when something is broken.

examples:
  ctxrelay claude doctor                          # this project
  ctxrelay claude doctor --project-dir ../app     # another project
  ctxrelay claude doctor --json                   # one JSON object, for scripts""",
}


@handle_errors
def main(argv: Sequence[str]) -> int:
    args = list(argv)
    name = args[0] if args and args[0] in _HELP else "install"
    rest = args[1:] if args and args[0] in _HELP else args
    parser = ArgumentParser(
        prog=f"ctxrelay claude {name}",
        description=_HELP[name],
        formatter_class=__import__("argparse").RawDescriptionHelpFormatter,
    )
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--project", action="store_true", help="this project (the default)")
    scope.add_argument("--user", action="store_true", help="the user's settings")
    parser.add_argument(
        "--project-dir",
        "--dir",  # its first name, kept as an alias
        dest="project_dir",
        type=Path,
        metavar="DIR",
        default=None,
        help="the project (default: the current directory)",
    )
    parser.add_argument("--json", action="store_true", help="print only JSON")
    opts = parser.parse_args(rest)
    project = (opts.project_dir or Path.cwd()).resolve()
    home = Path.home()
    if name == "doctor":
        report = doctor(project, home)
        if opts.json:
            print_json(report)
        else:
            for key, value in report.items():
                if key != "problems":
                    sys.stdout.write(f"{key:15} {value}\n")
            for problem in report["problems"]:
                sys.stdout.write(f"problem         {problem}\n")
        return 0 if report["ok"] else 1
    path = settings_path("user" if opts.user else "project", project, home)
    result = install(path) if name == "install" else uninstall(path)
    if opts.json:
        print_json(result.as_json())
    else:
        verb = "installed into" if name == "install" else "removed from"
        if not result.changed:
            sys.stdout.write(f"nothing to do: {path} is already as it should be\n")
        else:
            sys.stdout.write(f"ctxrelay {verb} {path}\n")
        if result.backup:
            sys.stdout.write(f"backup: {result.backup}\n")
        for rel in result.files_added:
            sys.stdout.write(f"added: {path.parent / rel}\n")
        for rel in result.files_removed:
            sys.stdout.write(f"removed: {path.parent / rel}\n")
        for rel in result.files_kept:
            sys.stdout.write(f"kept (not ctxrelay's, or changed since install): {rel}\n")
    return 0
