"""``ctxrelay gemini …``: install, check and configure ctxrelay's hooks for the Gemini CLI.

One module per subcommand, each with ``main(argv) -> int``; what they do lives in
:mod:`ctxrelay.gemini` (which never imports this package).
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxrelay.cli._dispatch import dispatch

__all__ = ["SUBCOMMANDS", "main"]

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "install": ("ctxrelay.cli.gemini.install", "add the hooks to .gemini/settings.json"),
    "uninstall": ("ctxrelay.cli.gemini.uninstall", "remove the hooks, leaving the file as found"),
    "doctor": ("ctxrelay.cli.gemini.doctor", "run each hook as the CLI would, report trust"),
    "config": ("ctxrelay.cli.gemini.config", "show or set the handoff slider and mode"),
    "mcp": ("ctxrelay.cli.gemini.mcp", "the MCP server of session_history (the CLI starts it)"),
}

_USAGE = """usage: ctxrelay gemini SUBCOMMAND [ARGS...]

The Gemini CLI host: ctxrelay's guard on the CLI's shell and read_file tools and the
handoff that clears the context by itself, through the CLI's hooks (settings.json), and
session_history over MCP.

subcommands:
{commands}

examples:
  ctxrelay gemini install                 # this project: .gemini/settings.json
  ctxrelay gemini install --user          # every trusted folder: ~/.gemini/settings.json
  ctxrelay gemini config --mode auto      # hand off by itself at the slider
  ctxrelay gemini doctor                  # does each hook work, is the folder trusted

'ctxrelay gemini SUBCOMMAND --help' shows each one's options, defaults and examples.
"""


def main(argv: Sequence[str]) -> int:
    return dispatch("ctxrelay gemini", SUBCOMMANDS, _USAGE, argv)
