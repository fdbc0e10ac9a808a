"""``session_history`` for Claude Code: the core's MCP server
(:mod:`ctxrelay.hooks.history`) as ``ctxrelay claude mcp`` serves it to a Claude Code
process in its project (``CLAUDE_PROJECT_DIR``), and the names install and doctor use."""

from __future__ import annotations

from ctxrelay.claude._state import HOST
from ctxrelay.claude.config import project_dir_of
from ctxrelay.hooks import history
from ctxrelay.hooks.history import (
    MODEL_TOOL_NAME,
    SERVER_NAME,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    ChainHistory,
    ServerCheck,
    check_server,
    tool_schema,
)

__all__ = [
    "MODEL_TOOL_NAME",
    "SERVER_NAME",
    "TOOL_DESCRIPTION",
    "TOOL_NAME",
    "ChainHistory",
    "ServerCheck",
    "check_server",
    "serve",
    "tool_schema",
]


def serve() -> None:
    """Serve the tool to the Claude Code process that started this server."""
    history.serve(HOST, project_dir_of())
