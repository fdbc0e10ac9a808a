"""``ctxrelay codex mcp``: the MCP server Codex starts for ``session_history`` (the
server and the tool: :mod:`ctxrelay.hooks.history`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ctxrelay.cli._common import handle_errors
from ctxrelay.cli._mcp import mcp_command
from ctxrelay.codex._state import HOST
from ctxrelay.hooks.history import serve

__all__ = ["main"]

_DESCRIPTION = """\
Serve the session_history tool to Codex over stdio (MCP). Codex starts it itself:
'ctxrelay codex install' registers it as [mcp_servers.ctxrelay] in the user's
config.toml (its tools approved without a prompt, so codex exec is never stopped), so
the model can list, search and read the earlier sessions of the current handoff chain,
of any agent (Claude Code sessions and Codex threads; never a session before a fresh
start without a handoff, never another project).

Each result is bounded like the runtime's session_history (16 KiB, 500 rows, 2 MiB of
text searched).

examples:
  ctxrelay codex mcp             # speaks MCP on stdin/stdout until the pipe closes"""


@handle_errors
def main(argv: Sequence[str]) -> int:
    return mcp_command("ctxrelay codex mcp", _DESCRIPTION, argv, lambda: serve(HOST, Path.cwd()))
