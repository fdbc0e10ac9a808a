"""What the hooks know about a subagent's type: whether it is one of the plugin's
agents, and its ``maxTurns``. What its transcript says (turns used, latest context,
model, whether it ended on a tool call) is the transcript reader's
(:func:`ctxrelay.transcripts.read_agent`); the reader's cursor file is
:func:`ctxrelay.claude._state.cursor_path`.

Stdlib only: this runs in ``ctxrelay-hook``.
"""

from __future__ import annotations

from ctxrelay.budget.bounds import AGENT_MAX_TURNS

__all__ = ["PLUGIN_NAME", "agent_name", "max_turns_for"]

PLUGIN_NAME = "ctxrelay"
"""The plugin's name: Claude Code calls its agents ``ctxrelay:<name>``."""


def agent_name(agent_type: object) -> str | None:
    """The plugin agent an ``agent_type`` names (``ctxrelay:investigator`` from the
    plugin, ``investigator`` from an install that copied the agent files), else None."""
    if not isinstance(agent_type, str):
        return None
    name = agent_type.removeprefix(f"{PLUGIN_NAME}:")
    return name if name in AGENT_MAX_TURNS else None


def max_turns_for(agent_type: object) -> int | None:
    """``maxTurns`` of one of the plugin's agent types; None (no turn bound) otherwise."""
    name = agent_name(agent_type)
    return None if name is None else AGENT_MAX_TURNS[name]
