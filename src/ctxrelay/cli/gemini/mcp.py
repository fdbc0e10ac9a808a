"""``ctxrelay gemini mcp``: the MCP server the Gemini CLI starts for ``session_history``
(the server and the tool: :mod:`ctxrelay.hooks.history`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ctxrelay.cli._common import handle_errors
from ctxrelay.cli._mcp import mcp_command
from ctxrelay.gemini._state import HOST
from ctxrelay.hooks.history import serve

__all__ = ["main"]

_DESCRIPTION = """\
Serve the session_history tool to the Gemini CLI over stdio (MCP). The CLI starts it
itself: 'ctxrelay gemini install' registers it as mcpServers.ctxrelay in the same
settings.json as the hooks (trusted, so no confirmation stops a gemini -p run), so the
model can list, search and read the earlier windows of the current handoff chain, of any
agent (Claude Code sessions, Codex threads, and the stretches of a Gemini session file
between the clears its handoff made; never a session before a fresh start without a
handoff, never another project). The model calls it mcp_ctxrelay_session_history.

Each result is bounded like the runtime's session_history (16 KiB, 500 rows, 2 MiB of
text searched).

examples:
  ctxrelay gemini mcp            # speaks MCP on stdin/stdout until the pipe closes"""


@handle_errors
def main(argv: Sequence[str]) -> int:
    return mcp_command("ctxrelay gemini mcp", _DESCRIPTION, argv, lambda: serve(HOST, Path.cwd()))
