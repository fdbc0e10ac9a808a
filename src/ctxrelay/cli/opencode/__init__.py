"""``ctxrelay opencode …``: ctxrelay's OpenCode host from the command line.

One module per subcommand, each with ``main(argv) -> int``; what they do lives in
:mod:`ctxrelay.opencode` (which never imports this package).
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxrelay.cli._dispatch import dispatch

__all__ = ["SUBCOMMANDS", "main"]

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "mcp": ("ctxrelay.cli.opencode.mcp", "the MCP server of session_history (OpenCode starts it)"),
}

_USAGE = """usage: ctxrelay opencode SUBCOMMAND [ARGS...]

The OpenCode host: ctxrelay's plugin (the guard on bash and read, the handoff into a
fresh session) and session_history over MCP.

subcommands:
{commands}

'ctxrelay opencode SUBCOMMAND --help' shows each one's options, defaults and examples.
"""


def main(argv: Sequence[str]) -> int:
    return dispatch("ctxrelay opencode", SUBCOMMANDS, _USAGE, argv)
