"""The settings the plugin needs, built from their owners: the hooks from
``ctxrelay.claude.hook.HANDLERS``, the environment from ``ctxrelay.budget.bounds``.

Two files shipped in the plugin directory are copies of these values, kept equal by
``tests/claude/test_plugin_files.py``: ``hooks/hooks.json`` (the plugin's own hooks) and
``settings-snippet.json`` (what ``ctxrelay claude install`` merges into ``settings.json``,
and what a user pastes by hand). A plugin cannot set environment variables, so the env
part reaches Claude Code only through the snippet.

To change the installed settings, change :func:`snippet` (e.g. add a ``statusLine``
key): ``ctxrelay claude install`` merges whatever it returns, key by key.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from ctxrelay.budget.bounds import BASH_MAX_OUTPUT_LENGTH, DISABLE_COMPACT
from ctxrelay.claude.hook import HANDLERS

__all__ = [
    "HOOK_COMMAND",
    "HOOK_MATCHERS",
    "HOOK_TIMEOUT_S",
    "STATUSLINE_COMMAND",
    "hooks_config",
    "plugin_dir",
    "settings_env",
    "snippet",
]

HOOK_COMMAND = "ctxrelay-hook"
"""The command Claude Code runs for each hook event (the console script: measured by
``bench/hooks.py`` to start as fast as ``python -m`` and faster than a shell wrapper)."""

HOOK_MATCHERS: dict[str, str] = {
    # Every tool: the guard reads Bash and Read, and at the usable limit any main-session
    # tool call is denied until the handoff (claude._limit; its fast path reads one small
    # state document and the transcript's tail).
    "PreToolUse": "*",
    # Report-now checks every tool result of a subagent.
    "PostToolUse": "*",
}
"""Tool-name matchers of the tool events; other events take no matcher."""

HOOK_TIMEOUT_S = 10
"""Claude Code kills a hook after this many seconds and carries on (the hook fails open
anyway; this bounds a hung filesystem)."""


def settings_env() -> dict[str, str]:
    """The environment the snippet sets (Claude Code wants strings)."""
    return {
        "DISABLE_COMPACT": str(DISABLE_COMPACT),
        "BASH_MAX_OUTPUT_LENGTH": str(BASH_MAX_OUTPUT_LENGTH),
    }


def hooks_config(command: str = HOOK_COMMAND) -> dict[str, list[dict[str, Any]]]:
    """Claude Code's ``hooks`` object: every event ``ctxrelay-hook`` handles runs it."""
    config: dict[str, list[dict[str, Any]]] = {}
    for event in HANDLERS:
        group: dict[str, Any] = {}
        if event in HOOK_MATCHERS:
            group["matcher"] = HOOK_MATCHERS[event]
        group["hooks"] = [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}]
        config[event] = [group]
    return config


STATUSLINE_COMMAND = "ctxrelay claude statusline"
"""Claude Code's statusLine: the context share and the countdown to the handoff; it
also records the window size for the hooks (:mod:`ctxrelay.claude.statusline`)."""


def snippet(command: str = HOOK_COMMAND) -> dict[str, Any]:
    """The whole settings snippet: ``env``, ``hooks`` and ``statusLine`` (a plugin cannot
    set a statusline, so it reaches Claude Code only through the snippet)."""
    return {
        "env": settings_env(),
        "hooks": hooks_config(command),
        "statusLine": {"type": "command", "command": STATUSLINE_COMMAND, "padding": 0},
    }


def plugin_dir() -> Path:
    """The plugin directory shipped inside the package."""
    return Path(str(resources.files("ctxrelay.claude") / "plugin"))
