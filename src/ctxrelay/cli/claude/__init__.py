"""``ctxrelay claude …``: install, check and run the Claude Code plugin.

One module per subcommand, each with ``main(argv) -> int``; what they do lives in
:mod:`ctxrelay.claude` (which never imports this package).
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxrelay.cli._dispatch import dispatch

__all__ = ["SUBCOMMANDS", "main"]

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "install": ("ctxrelay.cli.claude.install", "merge the hooks and settings into settings.json"),
    "uninstall": ("ctxrelay.cli.claude.uninstall", "remove exactly what install added"),
    "doctor": ("ctxrelay.cli.claude.doctor", "run each installed command as Claude Code would"),
    "config": ("ctxrelay.cli.claude.config", "show or set the main-session handoff mode"),
    "statusline": ("ctxrelay.cli.claude.statusline", "print the statusline (Claude Code runs it)"),
    "run": ("ctxrelay.cli.claude.run", "run a task headless, handing off to fresh sessions"),
    "handoff": ("ctxrelay.cli.claude.handoff", "reserve a handoff file path, list handoff files"),
    "mcp": ("ctxrelay.cli.claude.mcp", "serve session_history to Claude Code (MCP, stdio)"),
}

_USAGE = """usage: ctxrelay claude SUBCOMMAND [ARGS...]

The Claude Code plugin: subagents report in time, the main session hands off, file
dumps are guarded, and the statusline counts down.

subcommands:
{commands}

examples:
  ctxrelay claude install               # hooks, statusline, agents, the handoff skill
  ctxrelay claude doctor                # does each installed command work, and how fast
  ctxrelay claude config --mode auto    # hand off without being asked
  ctxrelay claude run --mode auto "fix the failing build"

'ctxrelay claude SUBCOMMAND --help' shows each one's options, defaults and examples.
"""


def main(argv: Sequence[str]) -> int:
    return dispatch("ctxrelay claude", SUBCOMMANDS, _USAGE, argv)
