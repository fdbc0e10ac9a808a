"""``ctxrelay codex …``: install, check and configure ctxrelay's hooks for the Codex CLI.

One module per subcommand, each with ``main(argv) -> int``; what they do lives in
:mod:`ctxrelay.codex` (which never imports this package).
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxrelay.cli._dispatch import dispatch

__all__ = ["SUBCOMMANDS", "main"]

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "install": ("ctxrelay.cli.codex.install", "add the hooks to hooks.json and trust them"),
    "uninstall": ("ctxrelay.cli.codex.uninstall", "remove the hooks and their trust"),
    "doctor": ("ctxrelay.cli.codex.doctor", "run each hook as Codex would, report its trust"),
    "config": ("ctxrelay.cli.codex.config", "show or set the handoff slider"),
    "mcp": ("ctxrelay.cli.codex.mcp", "the MCP server of session_history (Codex starts it)"),
}

_USAGE = """usage: ctxrelay codex SUBCOMMAND [ARGS...]

The Codex CLI host: ctxrelay's guard on Codex's shell tool, through Codex's hooks
(hooks.json), trusted the way Codex's own /hooks screen does.

subcommands:
{commands}

examples:
  ctxrelay codex install                # this project: .codex/hooks.json
  ctxrelay codex install --user         # every project: $CODEX_HOME/hooks.json
  ctxrelay codex doctor                 # does each hook work, and does Codex trust it

'ctxrelay codex SUBCOMMAND --help' shows each one's options, defaults and examples.
"""


def main(argv: Sequence[str]) -> int:
    return dispatch("ctxrelay codex", SUBCOMMANDS, _USAGE, argv)
