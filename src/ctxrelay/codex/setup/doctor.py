"""``ctxrelay codex doctor``: does Codex run what ctxrelay installed?

Codex skips a hook silently when it fails, times out or is not trusted, so the doctor
checks each step itself: the Codex CLI and its version; ctxrelay's hooks in the user's
and the project's ``hooks.json``; each hook command run as Codex runs it on a real
payload of each event (:func:`ctxrelay.codex.setup.probe.check_hook`); and each hook's trust
as Codex reports it (``hooks/list`` through ``codex app-server``). An untrusted or
modified hook, a project layer Codex does not load, hooks in both ``hooks.json`` and
``config.toml`` of one layer, or a hook that does not work is a problem: the report is
not ``ok`` and the command exits 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxrelay.codex.setup.appserver import AppServer, HookEntry
from ctxrelay.codex.setup.install import (
    EVENTS,
    codex_env,
    hooks_path,
    installed_commands,
    our_entries,
    project_trusted,
    trust_advice,
    untrusted_project_advice,
)
from ctxrelay.codex.setup.probe import check_hook
from ctxrelay.errors import ConfigError
from ctxrelay.hooks.install.binary import cli_version
from ctxrelay.hooks.install.launch import older_layout, older_layout_note
from ctxrelay.hooks.install.probe import Check

__all__ = ["Installed", "Report", "codex_version", "doctor"]


@dataclass(frozen=True, slots=True)
class Installed:
    """ctxrelay's hooks found in one layer's ``hooks.json``: event -> command."""

    where: str
    path: Path
    commands: dict[str, str]


@dataclass
class Report:
    codex_cli: str | None = None
    codex_version: str | None = None
    installed: list[Installed] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    trust: list[HookEntry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "codex_cli": self.codex_cli,
            "codex_version": self.codex_version,
            "installed": [
                {"where": i.where, "path": str(i.path), "commands": i.commands}
                for i in self.installed
            ],
            "checks": [c.as_json() for c in self.checks],
            "trust": [
                {"key": h.key, "event": h.event, "source": h.source_path, "trust": h.trust}
                for h in self.trust
            ],
            "problems": self.problems,
            "notes": self.notes,
        }


def codex_version(codex: Path) -> str | None:
    """``codex --version``'s number (``codex-cli 0.171.0`` -> ``0.171.0``)."""
    return cli_version(codex)


def _installed(where: str, path: Path, report: Report) -> Installed | None:
    try:
        commands = installed_commands(path)
    except ConfigError as exc:
        report.problems.append(str(exc))
        return None
    return Installed(where, path, commands) if commands else None


def _trust(codex: Path, home: Path, project: Path, report: Report) -> None:
    try:
        with AppServer(codex, codex_env(home), cwd=project) as server:
            listing = server.hooks(project)
            config = server.config(project)
    except ConfigError as exc:
        report.problems.append(f"cannot ask Codex which hooks it trusts ({exc})")
        return
    report.problems += [f"Codex reports: {e}" for e in listing.errors]
    for warning in listing.warnings:
        if "both" in warning:
            report.problems.append(f"Codex warns on every run: {warning}")
        else:
            report.notes.append(f"Codex warns: {warning}")
    for found in report.installed:
        ours = our_entries(listing.hooks, found.path)
        report.trust += ours
        if not ours and found.where == "project" and not project_trusted(config, project):
            report.problems.append(untrusted_project_advice(project))
            continue
        if len(ours) != len(found.commands):
            report.problems.append(
                f"Codex lists {len(ours)} of the {len(found.commands)} ctxrelay hooks in "
                f"{found.path}"
            )
        bad = [h for h in ours if h.trust not in ("trusted", "managed")]
        if bad:
            states = ", ".join(sorted({h.trust for h in bad}))
            report.problems.append(
                f"{len(bad)} of ctxrelay's hooks in {found.path} are {states}, so Codex "
                f"skips them without a word. {trust_advice(found.path)} (or run 'ctxrelay "
                f"codex install{' --user' if found.where == 'user' else ''}' again)"
            )


def doctor(project: Path, home: Path, codex: Path | None, *, runs: int = 1) -> Report:
    """Check ctxrelay's Codex hooks for ``project`` with Codex's home ``home``."""
    report = Report()
    if codex is not None:
        report.codex_cli = str(codex)
        report.codex_version = codex_version(codex)
    for where in ("user", "project"):
        found = _installed(where, hooks_path(where, project, home), report)
        if found is not None:
            report.installed.append(found)
    if not report.installed:
        report.problems.append(
            "ctxrelay's hooks are not installed for Codex here; run 'ctxrelay codex install' "
            "(this project) or 'ctxrelay codex install --user'"
        )
        return report
    if len(report.installed) > 1:
        user, here = (str(found.path) for found in report.installed)
        report.problems.append(
            f"ctxrelay's hooks are in both layers, the user's ({user}) and this project's "
            f"({here}): Codex runs both, so every hook answers twice (the resume note comes "
            "twice); keep one: 'ctxrelay codex uninstall' (this project) or 'ctxrelay codex "
            "uninstall --user'"
        )
    for found in report.installed:
        # The fix names the layer: a project install would add a second copy instead.
        fix = "ctxrelay codex install" + (" --user" if found.where == "user" else "")
        missing = [e for e in EVENTS if e not in found.commands]
        if missing:
            report.problems.append(
                f"{found.path} ({found.where} layer) lacks ctxrelay's {', '.join(missing)} "
                f"hook; run '{fix}' again"
            )
        if any(older_layout(c) for c in found.commands.values()):
            report.notes.append(older_layout_note(found.path, fix))
        for event, command in found.commands.items():
            check = check_hook(command, event, runs=runs)
            report.checks.append(check)
            if not check.ok:
                report.problems.append(
                    f"the {event} hook in {found.path} ({found.where} layer) {check.detail}; "
                    f"after fixing it, run '{fix}'"
                )
    if codex is None:
        report.problems.append(
            "the Codex CLI was not found (install @openai/codex), so its trust is unknown"
        )
    else:
        _trust(codex, home, project, report)
    report.notes.append("a running codex reads hooks when a session starts: restart it")
    return report
