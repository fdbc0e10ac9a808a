"""``ctxrelay claude mcp``: the MCP server Claude Code starts for ``session_history``
(the server and the tool: :mod:`ctxrelay.claude.extras.mcp`)."""

from __future__ import annotations

from collections.abc import Sequence

from ctxrelay.claude.extras.mcp import serve
from ctxrelay.cli._common import handle_errors
from ctxrelay.cli._mcp import mcp_command

__all__ = ["main"]

_DESCRIPTION = """\
Serve the session_history tool to Claude Code over stdio (MCP). Claude Code starts
it itself: 'ctxrelay claude install' registers it as the MCP server 'ctxrelay', so
the model can call mcp__ctxrelay__session_history to list, search and read the
earlier sessions of the current handoff chain (the sessions this one was handed off
from; never a session before a /clear made without a handoff, never another project).

Each result is bounded like the runtime's session_history (16 KiB, 500 rows, 2 MiB
of text searched). 'ctxrelay claude doctor' starts it and lists its tool.

examples:
  claude mcp add --scope local ctxrelay -- ctxrelay claude mcp   # what install runs
  ctxrelay claude mcp            # speaks MCP on stdin/stdout until the pipe closes"""


@handle_errors
def main(argv: Sequence[str]) -> int:
    return mcp_command("ctxrelay claude mcp", _DESCRIPTION, argv, serve)
