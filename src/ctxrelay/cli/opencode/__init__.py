"""``ctxrelay opencode …``: install, check and configure ctxrelay's plugin for OpenCode.

One module per subcommand, each with ``main(argv) -> int``; what they do lives in
:mod:`ctxrelay.opencode` (which never imports this package).
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxrelay.cli._dispatch import dispatch

__all__ = ["SUBCOMMANDS", "main"]

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "install": ("ctxrelay.cli.opencode.install", "write the plugin into .opencode/plugin/"),
    "uninstall": (
        "ctxrelay.cli.opencode.uninstall",
        "remove the plugin, leaving the folder as found",
    ),
    "doctor": ("ctxrelay.cli.opencode.doctor", "load the plugin in OpenCode, run each hook"),
    "config": ("ctxrelay.cli.opencode.config", "show or set the handoff slider and mode"),
    "mcp": ("ctxrelay.cli.opencode.mcp", "the MCP server of session_history (OpenCode starts it)"),
}

_USAGE = """usage: ctxrelay opencode SUBCOMMAND [ARGS...]

The OpenCode host: ctxrelay's guard on OpenCode's bash and read tools and the events of
the handoff, through a small plugin OpenCode loads from a config folder.

subcommands:
{commands}

examples:
  ctxrelay opencode install               # this project: .opencode/plugin/ctxrelay.ts
  ctxrelay opencode install --user        # every project: ~/.config/opencode/plugin/
  ctxrelay opencode config --mode auto    # hand off by itself at the slider
  ctxrelay opencode doctor                # does OpenCode load it, does each hook work

'ctxrelay opencode SUBCOMMAND --help' shows each one's options, defaults and examples.
"""


def main(argv: Sequence[str]) -> int:
    return dispatch("ctxrelay opencode", SUBCOMMANDS, _USAGE, argv)
