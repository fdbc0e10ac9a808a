"""``session_history`` for OpenCode: the core's MCP server (``ctxrelay opencode mcp``,
:mod:`ctxrelay.hooks.history`) as an entry of the ``mcp`` key of OpenCode's config
(``opencode.json``), which install merges in and uninstall takes out again.

OpenCode 1.18.33 (``docs/opencode-facts.md``, "MCP"): a ``{"type": "local", "command":
[…]}`` entry is started at OpenCode's start, as a child of its process, over stdio; its
tools reach the model as ``<server>_<tool>`` (``ctxrelay_session_history``) beside the
built-in ones, and run without a permission prompt (OpenCode's default permission for
a tool is ``allow``), in ``opencode run`` as in the interactive UI.
"""

from __future__ import annotations

import shlex
from typing import Any

from ctxrelay.hooks.history import SERVER_NAME, TOOL_NAME

__all__ = ["CONFIG_KEY", "CONFIG_SCHEMA", "MODEL_TOOL_NAME", "mcp_entry", "registration"]

CONFIG_KEY = "mcp"
"""The key of OpenCode's config that holds its MCP servers, by name."""

CONFIG_SCHEMA = "https://opencode.ai/config.json"
"""The ``$schema`` OpenCode 1.18.33 writes into a config file without one at its start:
install writes it first, so a file install made stays as install made it (and goes at
uninstall) after OpenCode ran."""

MODEL_TOOL_NAME = f"{SERVER_NAME}_{TOOL_NAME}"
"""What the model calls the tool: OpenCode joins the server's and the tool's names."""


def mcp_entry(ctxrelay: str) -> dict[str, Any]:
    """The server's entry (``ctxrelay``: the ctxrelay command install runs, as a shell
    would split it)."""
    return {"type": "local", "command": [*shlex.split(ctxrelay), "opencode", "mcp"]}


def registration(ctxrelay: str) -> dict[str, Any]:
    """What install merges into ``opencode.json``: ``mcp.ctxrelay`` (only that name of
    the key: the user's own servers stay), and OpenCode's own ``$schema``."""
    return {"$schema": CONFIG_SCHEMA, CONFIG_KEY: {SERVER_NAME: mcp_entry(ctxrelay)}}
