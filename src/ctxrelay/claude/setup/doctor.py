"""What ``ctxrelay claude doctor`` checks (the command: :mod:`ctxrelay.cli.claude.doctor`).

It proves the chain Claude Code will run rather than guessing at it: every command
ctxrelay installed — the hooks and statusline of the project's and the user's
``settings.json``, the handoff skill's ``!`` line, the hooks of an enabled ctxrelay
plugin — is started as Claude Code starts it, with a real payload
(:mod:`ctxrelay.claude.setup.probe`): ``cat`` of a big file must come back denied. The MCP
server ``ctxrelay`` (``session_history``) is started where it is registered and asked
``initialize`` and ``tools/list``. It also reports the hook's latency against a bare
Node start (the hooks' peer, as ``bench/hooks.py`` compares them), the handoff mode, the
Claude Code version, and whether that version loads mods (:data:`MODS_MIN_VERSION`).

A report is :attr:`Report.ok` when ctxrelay is installed somewhere and every command it
found works, and a Claude Code CLI is there.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxrelay.claude.config import load
from ctxrelay.claude.extras import automod
from ctxrelay.claude.extras.mcp import MODEL_TOOL_NAME, SERVER_NAME, check_server
from ctxrelay.claude.handoff import INSTALLED_SKILL
from ctxrelay.claude.setup import probe
from ctxrelay.claude.setup._snippet import PLUGIN_LAUNCHER
from ctxrelay.claude.setup.binary import cli_path
from ctxrelay.claude.setup.install import MCP_JSON, mcp_add_command, settings_path
from ctxrelay.errors import ConfigError
from ctxrelay.hooks.install.binary import cli_version
from ctxrelay.hooks.install.entries import hook_commands
from ctxrelay.hooks.install.files import load_json as load_settings
from ctxrelay.hooks.install.launch import older_layout, older_layout_note
from ctxrelay.hooks.install.manifest import MANIFEST_NAME
from ctxrelay.hooks.install.probe import Check, baseline_ms, run_as_host

__all__ = ["MODS_MIN_VERSION", "Found", "Report", "claude_version", "doctor", "find_installed"]

MODS_MIN_VERSION = (2, 1, 287)
"""The first Claude Code version that loads mods (a plugin's JavaScript hooks module)."""

_SKILL_LINE = re.compile(r"(?m)^!`([^`]+)`\s*$")


@dataclass(frozen=True, slots=True)
class Found:
    """Where ctxrelay is installed, and the commands Claude Code runs from there."""

    where: str
    """``project``, ``user`` (a settings install) or ``plugin``."""
    path: Path
    """The settings file, or the plugin's directory."""
    hooks: tuple[str, ...] = ()
    statusline: str | None = None
    skill: str | None = None
    plugin_root: Path | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "where": self.where,
            "path": str(self.path),
            "hooks": list(self.hooks),
            "statusline": self.statusline,
            "skill": self.skill,
        }


@dataclass(frozen=True, slots=True)
class Report:
    """Everything doctor found; :attr:`problems` in sentences, empty when all is well."""

    installed: tuple[Found, ...]
    checks: tuple[Check, ...]
    python_ms: float
    claude_cli: str | None
    claude_version: str | None
    mods: bool | None
    problems: tuple[str, ...] = field(default=())
    notes: tuple[str, ...] = field(default=())
    slider: str | None = None
    """Where the main session hands off here, in a sentence (the configured slider)."""
    threshold: float | None = None
    mode: str | None = None
    """The main-session handoff mode here (``manual``, ``auto``, ``off``)."""
    mode_source: str | None = None
    """Where the mode was set: ``env``, ``project``, ``user`` or ``default``."""

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def hook(self) -> Check | None:
        """The fastest working hook command's check (the one latency is reported for)."""
        timed = [c for c in self.checks if c.kind == "hook" and c.ok and c.ms is not None]
        return min(timed, key=lambda c: c.ms or 0.0) if timed else None

    @property
    def hook_ms(self) -> float | None:
        hook = self.hook
        return None if hook is None else hook.ms

    @property
    def hook_ratio(self) -> float | None:
        """The hook against a bare ``node -e 0`` timed between its runs (the peer
        ``bench/hooks.py`` compares with); ``None`` without ``node``."""
        hook = self.hook
        if hook is None or not hook.ms or not hook.node_ms:
            return None
        return round(hook.ms / hook.node_ms, 2)

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "installed": [f.as_json() for f in self.installed],
            "checks": [c.as_json() for c in self.checks],
            "hook_ms": self.hook_ms,
            "python_ms": self.python_ms,
            "hook_ratio": self.hook_ratio,
            "node_ms": None if self.hook is None else self.hook.node_ms,
            "claude_cli": self.claude_cli,
            "claude_version": self.claude_version,
            "mods": self.mods,
            "mods_min_version": ".".join(map(str, MODS_MIN_VERSION)),
            "problems": list(self.problems),
            "notes": list(self.notes),
            "slider": self.slider,
            "threshold": self.threshold,
            "mode": self.mode,
            "mode_source": self.mode_source,
        }


def _ours(command: object) -> bool:
    return isinstance(command, str) and "ctxrelay" in command


def _hook_commands(hooks: object, *, all_of_them: bool = False) -> list[str]:
    """The distinct hook commands of a ``hooks`` object: ctxrelay's, or (a plugin's own
    hooks file) every one."""
    found: list[str] = []
    for _, command in hook_commands(hooks):
        if (all_of_them or _ours(command)) and command not in found:
            found.append(command)
    return found


def _skill_command(claude_dir: Path) -> str | None:
    try:
        text = (claude_dir / "skills" / INSTALLED_SKILL / "SKILL.md").read_text(encoding="utf-8")
    except OSError:
        return None
    match = _SKILL_LINE.search(text)
    return match.group(1).strip() if match else None


def _plugins(settings: dict[str, Any], project: Path, home: Path) -> list[Found]:
    """The enabled ctxrelay plugins these settings name, where Claude Code installed them."""
    enabled = settings.get("enabledPlugins")
    names = (
        [k for k, v in enabled.items() if k.startswith("ctxrelay@") and v]
        if isinstance(enabled, dict)
        else []
    )
    if not names:
        return []
    try:
        registry = json.loads(
            (home / ".claude" / "plugins" / "installed_plugins.json").read_text(encoding="utf-8")
        )
    except (OSError, ValueError):
        registry = {}
    plugins = registry.get("plugins") if isinstance(registry, dict) else None
    found: list[Found] = []
    for name in names:
        entries = plugins.get(name) if isinstance(plugins, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict) or not isinstance(entry.get("installPath"), str):
                continue
            where = entry.get("projectPath")
            if isinstance(where, str) and Path(where) != project:
                continue
            root = Path(entry["installPath"])
            try:
                hooks = json.loads((root / "hooks" / "hooks.json").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                hooks = {}
            commands = _hook_commands(
                hooks.get("hooks") if isinstance(hooks, dict) else None, all_of_them=True
            )
            found.append(Found("plugin", root, tuple(commands), plugin_root=root))
    return found


def find_installed(project: Path, home: Path) -> tuple[list[Found], list[str]]:
    """Every place ctxrelay is installed for ``project``, and the settings files that
    could not be read (as sentences)."""
    found: list[Found] = []
    problems: list[str] = []
    seen_plugins: set[Path] = set()
    for scope in ("project", "user"):
        path = settings_path(scope, project, home)
        try:
            current = load_settings(path)
        except ConfigError as exc:
            problems.append(str(exc))
            continue
        hooks = _hook_commands(current.get("hooks"))
        line = current.get("statusLine")
        status = line.get("command") if isinstance(line, dict) else None
        skill = _skill_command(path.parent)
        if hooks or _ours(status) or skill or path.with_name(MANIFEST_NAME).exists():
            found.append(Found(scope, path, tuple(hooks), status if _ours(status) else None, skill))
        for plugin in _plugins(current, project, home):
            if plugin.path not in seen_plugins:
                seen_plugins.add(plugin.path)
                found.append(plugin)
    return found, problems


def _plugin_says(found: Found, project: Path, env: dict[str, str]) -> str | None:
    """What the plugin's ``SessionStart`` hook tells the user (its launcher says how to
    install ``ctxrelay-hook`` when it finds none)."""
    start = [c for c in found.hooks if "SessionStart" in c]
    if not start:
        return None
    ran = run_as_host(start[0], "{}", cwd=project, env={**os.environ, **env})
    try:
        message = json.loads(ran.stdout).get("systemMessage")
    except (ValueError, AttributeError):
        return None
    return message if isinstance(message, str) else None


def claude_version(cli: Path) -> str | None:
    """``claude --version``'s version number; ``None`` when it does not run."""
    return cli_version(cli)


def _absolute(command: str) -> bool:
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return bool(words) and Path(words[0]).is_absolute()


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def _slider(project: Path) -> tuple[str, float, str, str]:
    """The handoff point the hooks use in ``project``, in a sentence, the slider, and the
    mode with where it was set."""
    cfg = load(project)
    by = " by ctxrelay analyze --apply" if cfg.threshold_evidence else ""
    where = (
        "the default"
        if cfg.threshold_source == "default"
        else f"set{by} in the {cfg.threshold_source} config"
    )
    if cfg.threshold_source == "env":
        where = "set by CTXRELAY_THRESHOLD"
    sentence = f"the main session's handoff point is {cfg.slider_text()} ({where})"
    return sentence, cfg.threshold, cfg.main_handover, cfg.main_handover_source


def _registered_server(project: Path, home: Path) -> tuple[str, dict[str, Any]] | None:
    """Where the MCP server ``ctxrelay`` is named for ``project`` and its entry: the
    project's ``.mcp.json``, else Claude Code's own registry (``~/.claude.json``: the
    project's local servers, then the user's)."""
    try:
        servers = load_settings(project / MCP_JSON).get("mcpServers")
    except ConfigError:
        servers = None
    if isinstance(servers, dict) and isinstance(servers.get(SERVER_NAME), dict):
        return str(project / MCP_JSON), servers[SERVER_NAME]
    try:
        registry = load_settings(home / ".claude.json")
    except ConfigError:
        return None
    projects = registry.get("projects")
    mine = projects.get(str(project)) if isinstance(projects, dict) else None
    for where, holder in (("local", mine), ("user", registry)):
        found = holder.get("mcpServers") if isinstance(holder, dict) else None
        if isinstance(found, dict) and isinstance(found.get(SERVER_NAME), dict):
            return f"{home / '.claude.json'} ({where})", found[SERVER_NAME]
    return None


def _check_mcp(
    project: Path, home: Path, installed: list[Found], problems: list[str], notes: list[str]
) -> Check | None:
    """Start the registered MCP server and list its tools; say what is missing."""
    registered = _registered_server(project, home)
    if registered is None:
        ctxrelay = next(
            (f.statusline.rsplit(" claude statusline", 1)[0] for f in installed if f.statusline),
            "ctxrelay",
        )
        sentence = (
            f"the MCP server {SERVER_NAME} is not registered for this project, so "
            f"{MODEL_TOOL_NAME} is missing; register it with: {mcp_add_command(ctxrelay)}"
        )
        settings_here = any(f.where == "project" for f in installed)
        (problems if settings_here else notes).append(sentence)
        return None
    where, entry = registered
    command = entry.get("command")
    args = entry.get("args", [])
    if not isinstance(command, str) or not isinstance(args, list):
        problems.append(f"the MCP server {SERVER_NAME} in {where} has no command")
        return None
    shown = " ".join([command, *map(str, args)])
    found = check_server(command, [str(a) for a in args], cwd=project)
    if not found.ok:
        problems.append(f"the MCP server {SERVER_NAME} ({shown}, in {where}) {found.detail}")
    if not any(_allows(f.path) for f in installed if f.where != "plugin"):
        notes.append(
            f"no settings allow {MODEL_TOOL_NAME} (permissions.allow), so Claude Code asks "
            "before each call"
        )
    return Check("mcp", shown, found.ok, found.detail)


def _allows(path: Path) -> bool:
    try:
        permissions = load_settings(path).get("permissions")
    except ConfigError:
        return False
    allowed = permissions.get("allow") if isinstance(permissions, dict) else None
    return isinstance(allowed, list) and MODEL_TOOL_NAME in allowed


def doctor(project: Path, home: Path, runs: int = 5) -> Report:
    """Check every command ctxrelay installed for ``project``; see the module doc."""
    installed, problems = find_installed(project, home)
    notes: list[str] = []
    checks: list[Check] = []
    for found in installed:
        env = None if found.plugin_root is None else {"CLAUDE_PLUGIN_ROOT": str(found.plugin_root)}
        for command in found.hooks:
            # The plugin's launcher is the same behind every event; one event proves it.
            if PLUGIN_LAUNCHER in command and "PreToolUse" not in command:
                continue
            check = probe.check_hook(command, runs=runs, env=env)
            checks.append(check)
            said = None if check.ok or env is None else _plugin_says(found, project, env)
            if said:
                problems.append(said.rstrip("."))
            elif not check.ok:
                problems.append(f"the {found.where} hook command {command} {check.detail}")
            elif found.plugin_root is None and not _absolute(command):
                notes.append(
                    f"the {found.where} hook command {command} is found on PATH: it works here, "
                    "but only where Claude Code's PATH has it too"
                )
        if found.where != "plugin" and any(older_layout(c) for c in found.hooks):
            upgrade = "ctxrelay claude install" + (" --user" if found.where == "user" else "")
            notes.append(older_layout_note(found.path, upgrade))
        if found.statusline:
            check = probe.check_statusline(found.statusline)
            checks.append(check)
            if not check.ok:
                problems.append(f"the {found.where} statusline {found.statusline} {check.detail}")
        if found.skill:
            check = probe.check_skill(found.skill)
            checks.append(check)
            if not check.ok:
                problems.append(f"the handoff skill's command {found.skill} {check.detail}")
        if found.where != "plugin" and not found.hooks:
            problems.append(
                f"{found.path} has none of ctxrelay's hooks; run ctxrelay claude install"
            )
        elif found.where != "plugin":
            # A settings install carries the auto-handoff mod in its .claude/ directory
            # (the plugin route ships it in the plugin's own hooks.json).
            mod = automod.status(found.path.parent)
            (notes if mod.installed and mod.current else problems).append(mod.sentence.rstrip("."))
    routes = {"plugin" if f.where == "plugin" else "settings" for f in installed if f.hooks}
    if len(routes) > 1:
        problems.append(
            "ctxrelay is installed both in settings and as a plugin, so every hook runs "
            "twice; remove one (ctxrelay claude uninstall, or uninstall the plugin)"
        )
    if not installed:
        problems.append(
            "ctxrelay is installed neither in this project's nor in your settings, nor as a "
            "plugin; run ctxrelay claude install"
        )
    cli = cli_path()
    version = None if cli is None else claude_version(cli)
    mods = None if version is None else _version_tuple(version) >= MODS_MIN_VERSION
    if cli is None:
        problems.append(
            "no Claude Code CLI found (claude on PATH, or the one claude-agent-sdk bundles)"
        )
    elif version is None:
        problems.append(f"the Claude Code CLI {cli} does not report its version")
    if installed:
        mcp = _check_mcp(project, home, installed, problems, notes)
        if mcp is not None:
            checks.append(mcp)
    slider, threshold, mode, mode_source = _slider(project)
    return Report(
        slider=slider,
        threshold=threshold,
        mode=mode,
        mode_source=mode_source,
        installed=tuple(installed),
        checks=tuple(checks),
        python_ms=next((c.python_ms for c in checks if c.python_ms is not None), None)
        or baseline_ms(runs),
        claude_cli=None if cli is None else str(cli),
        claude_version=version,
        mods=mods,
        problems=tuple(problems),
        notes=tuple(notes),
    )
