"""``ctxrelay claude …``: install and run the Claude Code plugin.

Each subcommand lives in its own module of ``ctxrelay.claude`` with ``main(argv) -> int``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

__all__ = ["main"]

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "install": ("ctxrelay.claude.install", "merge the hooks and settings into settings.json"),
    "uninstall": ("ctxrelay.claude.install", "remove exactly what install added"),
    "doctor": ("ctxrelay.claude.install", "check the hook runs, its latency, the CLI version"),
    "config": ("ctxrelay.claude.config", "show or set the main-session handoff mode"),
    "statusline": ("ctxrelay.claude.statusline", "print the statusline (Claude Code runs it)"),
    "run": ("ctxrelay.claude.driver", "run a task headless, handing off to fresh sessions"),
    "handoff": ("ctxrelay.claude.handoff", "reserve a handoff file path, list handoff files"),
}

_USAGE = """usage: ctxrelay claude SUBCOMMAND [ARGS...]

The Claude Code plugin: subagents report in time, the main session hands off, file
dumps are guarded, and the statusline counts down.

subcommands:
{lines}

examples:
  ctxrelay claude install               # hooks, statusline, agents, the handoff skill
  ctxrelay claude doctor                # does the hook run, and how fast
  ctxrelay claude config --mode auto    # hand off without being asked
  ctxrelay claude run --mode auto "fix the failing build"

'ctxrelay claude SUBCOMMAND --help' shows each one's options, defaults and examples.
"""


def main(argv: Sequence[str]) -> int:
    args = list(argv)
    if not args or args[0] in ("-h", "--help"):
        width = max(len(n) for n in SUBCOMMANDS)
        lines = "\n".join(f"  {n.ljust(width)}  {h}" for n, (_, h) in SUBCOMMANDS.items())
        sys.stdout.write(_USAGE.format(lines=lines))
        return 0 if args else 2
    name = args[0]
    if name not in SUBCOMMANDS:
        sys.stderr.write(f"ctxrelay claude: unknown subcommand {name!r}; see --help\n")
        return 2
    module = importlib.import_module(SUBCOMMANDS[name][0])
    # The module gets the subcommand name first so one module can serve several.
    code: int = module.main([name, *args[1:]])
    return code
