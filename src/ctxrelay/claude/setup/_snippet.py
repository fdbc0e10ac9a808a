"""The settings the plugin needs, built from their owners: the hooks from
``ctxrelay.claude.hook.CLAUDE.handlers``, the environment from ``ctxrelay.budget.bounds``.

Two files shipped in the plugin directory are copies of these values, kept equal by
``tests/claude/test_plugin_files.py``: ``hooks/hooks.json`` (the plugin's own hooks) and
``settings-snippet.json`` (what ``ctxrelay claude install`` merges into ``settings.json``,
and what a user pastes by hand). A plugin cannot set environment variables, so the env
part reaches Claude Code only through the snippet.

To change the installed settings, change :func:`snippet` (e.g. add a ``statusLine``
key): ``ctxrelay claude install`` merges whatever it returns, key by key.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from ctxrelay.budget.bounds import BASH_MAX_OUTPUT_LENGTH, DISABLE_AUTO_COMPACT, HOOK_TIMEOUT_S
from ctxrelay.claude.host import CLAUDE
from ctxrelay.hooks.install.entries import command_hooks

__all__ = [
    "CTXRELAY_COMMAND",
    "HOOK_COMMAND",
    "HOOK_MATCHERS",
    "PLUGIN_LAUNCHER",
    "STATUSLINE_COMMAND",
    "hooks_config",
    "plugin_dir",
    "plugin_hook_command",
    "settings_env",
    "snippet",
    "statusline_command",
]

HOOK_COMMAND = "ctxrelay-hook"
"""The console script every hook event runs, by name: what the shipped snippet (pasted by
hand) says and what the plugin's launcher looks for. ``ctxrelay claude install`` writes
an absolute command instead (:mod:`ctxrelay.claude.setup.launcher`)."""

CTXRELAY_COMMAND = "ctxrelay"
"""The ``ctxrelay`` command, by name, in the shipped snippet and skill."""

PLUGIN_LAUNCHER = "hooks/run-hook.sh"
"""The plugin's hook launcher, relative to the plugin directory: it finds
``ctxrelay-hook`` (``PATH``, then where pipx and uv put tools) and, when there is none,
makes ``SessionStart`` say how to install it."""

HOOK_MATCHERS: dict[str, str] = {
    # Every tool: the guard reads Bash and Read, and at the usable limit any main-session
    # tool call is denied until the handoff (claude._limit; its fast path reads one small
    # state document and the transcript's tail).
    "PreToolUse": "*",
    # Report-now checks every tool result of a subagent.
    "PostToolUse": "*",
}
"""Tool-name matchers of the tool events; other events take no matcher."""


def settings_env() -> dict[str, str]:
    """The environment the snippet sets (Claude Code wants strings)."""
    return {
        "DISABLE_AUTO_COMPACT": str(DISABLE_AUTO_COMPACT),
        "BASH_MAX_OUTPUT_LENGTH": str(BASH_MAX_OUTPUT_LENGTH),
    }


def hooks_config(
    command: str | Callable[[str], str] = HOOK_COMMAND,
) -> dict[str, list[dict[str, Any]]]:
    """Claude Code's ``hooks`` object: every event ``ctxrelay-hook`` handles runs
    ``command`` (or ``command(event)``)."""
    return command_hooks(CLAUDE.handlers, command, matchers=HOOK_MATCHERS, timeout=HOOK_TIMEOUT_S)


def plugin_hook_command(event: str) -> str:
    """What the plugin's ``hooks/hooks.json`` runs for ``event``: the launcher, told the
    event so that it can answer ``SessionStart`` when ``ctxrelay-hook`` is missing."""
    return f'sh "${{CLAUDE_PLUGIN_ROOT}}/{PLUGIN_LAUNCHER}" {event}'


def statusline_command(ctxrelay: str = CTXRELAY_COMMAND) -> str:
    """Claude Code's statusLine command, for a ``ctxrelay`` command."""
    return f"{ctxrelay} claude statusline"


STATUSLINE_COMMAND = statusline_command()
"""Claude Code's statusLine: the context share and the countdown to the handoff; it
also records the window size for the hooks (:mod:`ctxrelay.claude.extras.statusline`)."""


def snippet(hook: str = HOOK_COMMAND, ctxrelay: str = CTXRELAY_COMMAND) -> dict[str, Any]:
    """The whole settings snippet: ``env``, ``hooks`` and ``statusLine`` (a plugin cannot
    set a statusline, so it reaches Claude Code only through the snippet), for a hook
    command and a ``ctxrelay`` command (by default their bare names)."""
    return {
        "env": settings_env(),
        "hooks": hooks_config(hook),
        "statusLine": {"type": "command", "command": statusline_command(ctxrelay), "padding": 0},
    }


def plugin_dir() -> Path:
    """The plugin directory shipped inside the package."""
    return Path(str(resources.files("ctxrelay.claude") / "plugin"))
