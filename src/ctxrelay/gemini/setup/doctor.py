"""``ctxrelay gemini doctor``: does the Gemini CLI run what ctxrelay installed?

The CLI ignores a hook's failure and runs no hook at all in a folder it does not trust,
so the doctor checks each step itself: the CLI and its version; ctxrelay's hooks in the
user's and the project's ``settings.json``; each hook command run as the CLI runs it on a
real payload of each event (:func:`ctxrelay.gemini.setup.probe.check_hook`); and the
folder's trust as the CLI decides it (:func:`ctxrelay.gemini.setup.trust.folder_trust`);
and ``session_history``'s MCP server (``mcpServers.ctxrelay``) started and asked for its
tool as the CLI would (:func:`ctxrelay.hooks.history.check_server`). An untrusted
folder, no hooks, a hook that does not work, or a server missing beside the hooks or not
answering is a problem.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxrelay.errors import ConfigError
from ctxrelay.gemini.setup.install import settings_path
from ctxrelay.gemini.setup.launcher import is_ours
from ctxrelay.gemini.setup.probe import check_hook
from ctxrelay.gemini.setup.trust import Trust, folder_trust, trust_advice
from ctxrelay.hooks.history import SERVER_NAME, check_server
from ctxrelay.hooks.install.binary import cli_version
from ctxrelay.hooks.install.entries import hook_commands
from ctxrelay.hooks.install.files import load_json
from ctxrelay.hooks.install.probe import Check

__all__ = ["Installed", "Report", "doctor"]


@dataclass(frozen=True, slots=True)
class Installed:
    """ctxrelay's hooks found in one ``settings.json``: event -> command."""

    where: str
    path: Path
    commands: dict[str, str]
    server: dict[str, Any] | None = None
    """Its ``mcpServers.ctxrelay``, when there."""


@dataclass
class Report:
    gemini_cli: str | None = None
    gemini_version: str | None = None
    trust: Trust = "unknown"
    installed: list[Installed] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "gemini_cli": self.gemini_cli,
            "gemini_version": self.gemini_version,
            "trust": self.trust,
            "installed": [
                {"where": i.where, "path": str(i.path), "commands": i.commands}
                for i in self.installed
            ],
            "checks": [c.as_json() for c in self.checks],
            "problems": self.problems,
        }


def doctor(project: Path, gemini: Path | None) -> Report:
    """Check what is installed for ``project`` and the user (``gemini``: the CLI)."""
    report = Report(trust=folder_trust(project))
    if gemini is not None:
        report.gemini_cli, report.gemini_version = str(gemini), cli_version(gemini)
    for where in ("user", "project"):
        path = settings_path(where, project)
        try:
            data = load_json(path)
        except ConfigError as exc:
            report.problems.append(str(exc))
            continue
        commands = {e: c for e, c in hook_commands(data.get("hooks")) if is_ours(c)}
        servers = data.get("mcpServers")
        server = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
        if commands:
            found = Installed(where, path, commands, server if isinstance(server, dict) else None)
            report.installed.append(found)
    if not report.installed:
        report.problems.append(
            "ctxrelay's hooks are in neither settings.json: run 'ctxrelay gemini install'"
        )
    if report.trust != "trusted":
        report.problems.append(trust_advice(project))
    seen: set[tuple[str, str]] = set()
    for found in report.installed:
        for event, command in found.commands.items():
            if (event, command) in seen:
                continue
            seen.add((event, command))
            check = check_hook(command, event)
            report.checks.append(check)
            if not check.ok:
                report.problems.append(
                    f"the {event} hook of {found.path} does not work: {check.detail}"
                )
        _check_server(report, found, project)
    return report


def _check_server(report: Report, found: Installed, project: Path) -> None:
    """The ``session_history`` server registered beside the hooks, started as the CLI
    starts it."""
    entry = found.server
    if entry is None:
        report.problems.append(
            f"{found.path} has ctxrelay's hooks but not its MCP server "
            f"(mcpServers.{SERVER_NAME}, session_history): run 'ctxrelay gemini install' again"
        )
        return
    command, args = entry.get("command"), entry.get("args", [])
    if not isinstance(command, str) or not isinstance(args, list):
        report.problems.append(f"mcpServers.{SERVER_NAME} of {found.path} has no command")
        return
    shown = " ".join([command, *map(str, args)])
    checked = check_server(command, [str(a) for a in args], cwd=project)
    report.checks.append(Check("mcp", shown, checked.ok, checked.detail))
    if not checked.ok:
        report.problems.append(
            f"the MCP server {SERVER_NAME} of {found.path} ({shown}) {checked.detail}"
        )
