"""Install ctxrelay's hooks into the Gemini CLI's ``settings.json`` and take exactly that
out again (``ctxrelay gemini install | uninstall``, :mod:`ctxrelay.cli.gemini`).

The hooks go to the project's ``.gemini/settings.json`` or the user's
``~/.gemini/settings.json`` (``$GEMINI_CLI_HOME/.gemini``), each running this
environment's ctxrelay by absolute path, run on a real payload of every event first
(:func:`choose_command`). The machinery is the core's (:mod:`ctxrelay.hooks.install`):
our groups are appended to each event's list (an earlier install's replaced, never
doubled); the manifest ``ctxrelay-install.json`` and one backup of the file as found sit
beside it, and uninstall puts back the very bytes it found (or removes a file that was
not there) when nothing else changed it since, and otherwise removes only our groups.

``session_history``: install registers the core's MCP server (``ctxrelay gemini mcp``,
:mod:`ctxrelay.hooks.history`) as ``mcpServers.ctxrelay`` of the same file, with
``"trust": true``, the CLI's documented way (0.61.0, its MCP server guide) for a
server the user installs to run its tools without a confirmation: a ``gemini -p`` run
leaves a tool that would ask out of what the model is offered. The model sees it as
``mcp_ctxrelay_session_history``; it only reads the chain's own sessions. Uninstall puts
back what the key held.

The CLI compresses a session at half its window by default, before the default slider;
install moves that to ``GEMINI_COMPRESSION_THRESHOLD`` (``model.compressionThreshold``) so
the handoff comes first and the CLI's compression stays as the hard limit.

Trust: the CLI runs no hooks in a folder it does not trust and ignores the project's
settings there. A project install into such a folder changes nothing and says, in one
sentence, to trust the folder in the CLI first (:func:`ctxrelay.gemini.setup.trust.trust_advice`);
ctxrelay never writes ``trustedFolders.json``. The CLI runs new project hooks without
asking (it prints a warning once and records them in ``trusted_hooks.json``).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxrelay.budget.bounds import GEMINI_COMPRESSION_THRESHOLD, HOOK_TIMEOUT_S
from ctxrelay.errors import ConfigError
from ctxrelay.gemini._state import gemini_dir
from ctxrelay.gemini.setup import launcher, probe
from ctxrelay.gemini.setup.launcher import is_ours
from ctxrelay.gemini.setup.trust import folder_trust, trust_advice
from ctxrelay.hooks.history import SERVER_NAME
from ctxrelay.hooks.install.entries import command_hooks, runs_ours
from ctxrelay.hooks.install.launch import REINSTALL_GUARD, choose_hook, ctxrelay_command
from ctxrelay.hooks.install.manifest import Manifest
from ctxrelay.hooks.install.merge import Ours, Rule, Rules

__all__ = [
    "EVENTS",
    "MERGE_RULES",
    "OURS",
    "InstallResult",
    "choose_command",
    "hooks_config",
    "install",
    "mcp_server",
    "settings_path",
    "snippet",
    "uninstall",
]

TOOLS = "run_shell_command|read_file"
"""The tools the guard judges (the CLI matches a tool event's matcher as a regex)."""

EVENTS: Mapping[str, str | None] = {
    "BeforeTool": TOOLS,
    "AfterTool": TOOLS,
    "BeforeAgent": None,
    "AfterAgent": None,
}
"""The events ctxrelay's hook answers on the Gemini CLI, with their matcher."""

MERGE_RULES: Rules = {"hooks": Rule.LISTS, "model": Rule.KEYS, "mcpServers": Rule.KEYS}
"""The hooks' groups appended; of ``model``, only ``compressionThreshold`` set; of
``mcpServers``, only ``ctxrelay``."""
OURS: Ours = {"hooks": runs_ours(is_ours)}


def settings_path(scope: str, project: Path) -> Path:
    """The ``settings.json`` of the user (``~/.gemini``) or of ``project``."""
    return (
        gemini_dir() / "settings.json" if scope == "user" else project / ".gemini" / "settings.json"
    )


def hooks_config(command: str) -> dict[str, list[dict[str, Any]]]:
    """ctxrelay's groups for each event, running ``command``; the CLI counts a hook's
    timeout in milliseconds and names each hook in its warnings and ``/hooks``."""
    config = command_hooks(EVENTS, command, matchers=EVENTS, timeout=HOOK_TIMEOUT_S * 1000)
    for event, groups in config.items():
        for hook in groups[0]["hooks"]:
            hook["name"] = f"ctxrelay-{event}"
    return config


def mcp_server(ctxrelay: str) -> dict[str, Any]:
    """The ``mcpServers`` entry of ``session_history`` (``ctxrelay``: the ctxrelay command
    install runs): trusted, so no confirmation stops a ``gemini -p`` run."""
    words = [*shlex.split(ctxrelay), "gemini", "mcp"]
    return {"command": words[0], "args": words[1:], "trust": True}


def snippet(command: str, ctxrelay: str) -> dict[str, Any]:
    """What install merges into ``settings.json``: the hooks running ``command``, the
    ``session_history`` server running ``ctxrelay``, and the CLI's compression moved from
    half the window to ``GEMINI_COMPRESSION_THRESHOLD``, above the slider, so the handoff
    comes first (what each setting held is put back at uninstall)."""
    return {
        "hooks": hooks_config(command),
        "model": {"compressionThreshold": GEMINI_COMPRESSION_THRESHOLD},
        "mcpServers": {SERVER_NAME: mcp_server(ctxrelay)},
    }


def choose_command(command: str | None = None) -> str:
    """The hook command to install: ``command`` when given, else the first of this
    environment's that works on real payloads of every event; one that does not is a
    :class:`ConfigError`, and nothing is written."""
    return choose_hook(
        command,
        launcher.hook_candidates(),
        lambda candidate: probe.check_every_event(candidate, list(EVENTS)),
        reinstall=REINSTALL_GUARD,
    )


@dataclass
class InstallResult:
    settings: Path
    changed: bool
    command: str = ""
    trust: str = ""
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "settings": str(self.settings),
            "changed": self.changed,
            "command": self.command,
            "trust": self.trust,
            "notes": self.notes,
        }


def install(scope: str, project: Path, command: str) -> InstallResult:
    """Append ctxrelay's groups running ``command`` to the ``scope`` settings, with the
    ``session_history`` server. A project
    the CLI does not trust is refused (a :class:`ConfigError`, nothing written)."""
    trust = folder_trust(project)
    if scope == "project" and trust != "trusted":
        raise ConfigError(trust_advice(project))
    path = settings_path(scope, project)
    manifest = Manifest.load(path.parent)
    wanted = snippet(command, ctxrelay_command())
    merged = manifest.merge_file(path, wanted, MERGE_RULES, ours=OURS, backup=True)
    manifest.data["command"] = command
    manifest.save()
    result = InstallResult(path, merged.changed, command=command, trust=trust)
    if merged.backup is not None:
        result.notes.append(f"the file as it was found is kept in {merged.backup}")
    if trust != "trusted":
        result.notes.append(trust_advice(project))
    result.notes.append("restart a running gemini: it reads its hooks when it starts")
    return result


def uninstall(scope: str, project: Path) -> InstallResult:
    """Remove what :func:`install` added: the file as it was found when nothing else
    changed it since, else only ctxrelay's groups."""
    path = settings_path(scope, project)
    manifest = Manifest.load(path.parent)
    taken = manifest.unmerge_file(
        path, MERGE_RULES, ours=OURS, default={"hooks": {}}, backup=True, what="ctxrelay's hooks"
    )
    result = InstallResult(path, taken.changed)
    if taken.changed and not taken.as_found:
        kept = "" if taken.backup is None else f" (as it was found: {taken.backup})"
        result.notes.append(
            f"{path} changed since install: only ctxrelay's hooks were removed{kept}"
        )
    manifest.remove()
    return result
