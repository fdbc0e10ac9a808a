"""The ``ctxrelay`` command. Each subcommand lives in its own module and is imported
only when it runs, so ``ctxrelay policy`` never pays for the provider SDKs."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

__all__ = ["main"]

# name -> (module, one-line help). A module exposes ``main(argv) -> int``.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("ctxrelay.cli.demo", "run a built-in session that hands off (no API key)"),
    "policy": ("ctxrelay.cli.policy", "plan a budget or simulate dispatches through the policy"),
    "run": ("ctxrelay.cli.run", "run an agent session whose windows hand off"),
    "sessions": ("ctxrelay.cli.sessions", "list, show, search and reset stored sessions"),
    "claude": ("ctxrelay.cli.claude", "the Claude Code plugin: install, doctor, statusline, run"),
    "analyze": ("ctxrelay.cli.analyze", "price what a session cost and what a policy would have"),
}

_USAGE = """usage: ctxrelay [--version] [--help] COMMAND [ARGS...]

Bound the context of LLM agent sessions by agent-led handoff.

commands:
{commands}

Examples:
  ctxrelay demo                                        # see a handoff, no API key needed
  ctxrelay policy plan --limit 200000 --reserve 32000 --threshold 60
  ctxrelay run --model anthropic:claude-sonnet-4-6 "Fix the failing test"

Run 'ctxrelay COMMAND --help' for a command's options.
"""


def _usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = "\n".join(f"  {name.ljust(width)}  {hlp}" for name, (_, hlp) in COMMANDS.items())
    return _USAGE.format(commands=lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI in-process and return its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(_usage())
        return 0 if args else 2
    if args[0] == "--version":
        from ctxrelay import __version__

        sys.stdout.write(f"ctxrelay {__version__}\n")
        return 0
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        from ctxrelay.cli._suggest import suggest

        sys.stderr.write(f"ctxrelay: unknown command {name!r}; run '{suggest('--help')}'\n")
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    code: int = module.main(rest)
    return code
