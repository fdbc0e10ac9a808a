"""``ctxrelay opencode doctor``: does OpenCode run what ctxrelay installed?

OpenCode runs a plugin in its own process and says nothing when one fails to load, so
the doctor checks each step itself: OpenCode and its version; ctxrelay's plugin in the
user's and the project's config folders, and the hook command each holds; that the
real OpenCode loads each copy, in this project, with the network it has
(:func:`loaded`: ``opencode debug config`` loads the plugins without calling a model,
and each copy writes one line to the file ``CTXRELAY_OPENCODE_DOCTOR`` names); and each
hook command run as the plugin runs it on a real payload of each event it forwards
(:func:`ctxrelay.opencode.setup.probe.check_hook`). No plugin, a copy OpenCode did not
load, or a hook that does not work is a problem.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxrelay.hooks.install.binary import cli_version
from ctxrelay.hooks.install.probe import Check
from ctxrelay.opencode.setup.install import plugin_path
from ctxrelay.opencode.setup.probe import check_hook

__all__ = ["LOAD_TIMEOUT_S", "Found", "Report", "doctor", "installed", "loaded"]

LOAD_TIMEOUT_S = 120
"""The longest OpenCode may take to load its plugins (offline without the stub, its
npm install stalls the start for about a minute first)."""
ENV = "CTXRELAY_OPENCODE_DOCTOR"


@dataclass(frozen=True, slots=True)
class Found:
    """ctxrelay's plugin found in one config folder: its hook command and events."""

    where: str
    path: Path
    hook: list[str]
    events: list[str]


@dataclass
class Report:
    opencode: str | None = None
    opencode_version: str | None = None
    installed: list[Found] = field(default_factory=list)
    loaded: list[str] = field(default_factory=list)
    """The plugin files the real OpenCode loaded."""
    checks: list[Check] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "opencode": self.opencode,
            "opencode_version": self.opencode_version,
            "installed": [
                {"where": f.where, "path": str(f.path), "hook": f.hook, "events": f.events}
                for f in self.installed
            ],
            "loaded": self.loaded,
            "checks": [c.as_json() for c in self.checks],
            "problems": self.problems,
        }


def _constant(text: str, name: str) -> list[str] | None:
    """The JSON list ``const NAME: string[] = [...]`` of the plugin's source."""
    for line in text.splitlines():
        head, sep, value = line.partition(f"const {name}: string[] = ")
        if sep and not head.strip():
            try:
                found = json.loads(value)
            except ValueError:
                return None
            return [str(v) for v in found] if isinstance(found, list) else None
    return None


def installed(where: str, project: Path) -> Found | None:
    """ctxrelay's plugin in the ``where`` config folder, when it is there."""
    path = plugin_path(where, project)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    hook, events = _constant(text, "HOOK"), _constant(text, "EVENTS")
    return Found(where, path, hook or [], events or [])


def loaded(opencode: Path, project: Path) -> tuple[list[str], str]:
    """The plugin files the real OpenCode loads in ``project`` (``debug config``), and
    why none when it could not say."""
    with tempfile.TemporaryDirectory(prefix="ctxrelay-opencode-doctor-") as tmp:
        said = Path(tmp) / "loaded.jsonl"
        try:
            done = subprocess.run(
                [str(opencode), "debug", "config"],
                cwd=project,
                env={**os.environ, ENV: str(said)},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=LOAD_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return [], f"opencode debug config took more than {LOAD_TIMEOUT_S} s"
        except OSError as exc:
            return [], f"opencode does not start: {exc}"
        files: list[str] = []
        text = said.read_text(encoding="utf-8") if said.is_file() else ""
        for line in text.splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("file"), str):
                files.append(entry["file"].removeprefix("file://"))
        why = "" if done.returncode == 0 else f"opencode debug config exited {done.returncode}"
        return files, why


def doctor(project: Path, opencode: Path | None) -> Report:
    """Check what is installed for ``project`` and the user (``opencode``: the CLI)."""
    report = Report()
    for where in ("user", "project"):
        found = installed(where, project)
        if found is not None:
            report.installed.append(found)
    if not report.installed:
        report.problems.append(
            "ctxrelay's plugin is in neither config folder: run 'ctxrelay opencode install'"
        )
    if opencode is None:
        report.problems.append("OpenCode was not found: install opencode-ai, then run this again")
    else:
        report.opencode, report.opencode_version = str(opencode), cli_version(opencode)
        if report.installed:
            report.loaded, why = loaded(opencode, project)
            for found in report.installed:
                if str(found.path) not in report.loaded:
                    reason = f" ({why})" if why else ""
                    report.problems.append(
                        f"OpenCode did not load the plugin {found.path}{reason}: run it with "
                        "--print-logs to see why, or run 'ctxrelay opencode install' again"
                    )
    seen: set[tuple[str, str]] = set()
    for found in report.installed:
        if not found.hook:
            report.problems.append(f"{found.path} holds no hook command: install it again")
            continue
        command = shlex.join(found.hook)
        for event in found.events:
            if (event, command) in seen:
                continue
            seen.add((event, command))
            check = check_hook(command, event)
            report.checks.append(check)
            if not check.ok:
                report.problems.append(
                    f"the {event} hook of {found.path} does not work: {check.detail}"
                )
    return report
