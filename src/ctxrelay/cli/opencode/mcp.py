"""``ctxrelay opencode mcp``: the MCP server OpenCode starts for ``session_history`` (the
server and the tool: :mod:`ctxrelay.hooks.history`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ctxrelay.cli._common import handle_errors
from ctxrelay.cli._mcp import mcp_command
from ctxrelay.hooks.history import serve
from ctxrelay.opencode._state import HOST

__all__ = ["main"]

_DESCRIPTION = """\
Serve the session_history tool to OpenCode over stdio (MCP). OpenCode starts it itself:
'ctxrelay opencode install' registers it as mcp.ctxrelay in opencode.json
({"type": "local", "command": [...]}), so the model can list, search and read the
earlier sessions of the current handoff chain, of any agent (OpenCode sessions, Claude
Code sessions, Codex threads, Gemini CLI sessions; never a session before a fresh start
without a handoff, never another project). The model calls it ctxrelay_session_history;
OpenCode runs it without asking.

Each result is bounded like the runtime's session_history (16 KiB, 500 rows, 2 MiB of
text searched).

examples:
  ctxrelay opencode mcp          # speaks MCP on stdin/stdout until the pipe closes"""


@handle_errors
def main(argv: Sequence[str]) -> int:
    return mcp_command("ctxrelay opencode mcp", _DESCRIPTION, argv, lambda: serve(HOST, Path.cwd()))
