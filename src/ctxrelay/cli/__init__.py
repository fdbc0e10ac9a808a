"""The ``ctxrelay`` command. Each subcommand lives in its own module and is imported
only when it runs, so ``ctxrelay policy`` never pays for the provider SDKs."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ctxrelay import __version__
from ctxrelay.cli._dispatch import dispatch

__all__ = ["main"]

# name -> (module, one-line help). A module exposes ``main(argv) -> int``.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("ctxrelay.cli.demo", "run a built-in session that hands off (no API key)"),
    "policy": ("ctxrelay.cli.policy", "plan a budget or simulate dispatches through the policy"),
    "run": ("ctxrelay.cli.run", "run an agent session whose windows hand off"),
    "sessions": ("ctxrelay.cli.sessions", "list, show, search and reset stored sessions"),
    "claude": ("ctxrelay.cli.claude", "the Claude Code plugin: install, doctor, statusline, run"),
    "codex": ("ctxrelay.cli.codex", "the Codex CLI host: install, uninstall, doctor, config"),
    "gemini": ("ctxrelay.cli.gemini", "the Gemini CLI host: install, uninstall, doctor, config"),
    "opencode": ("ctxrelay.cli.opencode", "the OpenCode host: install, uninstall, doctor, config"),
    "handoff": ("ctxrelay.cli.handoff", "list, show, drop or continue a handoff in any agent"),
    "analyze": ("ctxrelay.cli.analyze", "price what a session cost and what a policy would have"),
}

_USAGE = """usage: ctxrelay [--version] [--help] COMMAND [ARGS...]

Bound the context of LLM agent sessions by agent-led handoff.

commands:
{commands}

Examples:
  ctxrelay demo                 # see a handoff, no API key needed
  ctxrelay policy plan --limit 200000 --reserve 32000 --threshold 60
  ctxrelay run --model anthropic:claude-sonnet-4-6 "Fix the failing test"

Run 'ctxrelay COMMAND --help' for a command's options.
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI in-process and return its exit code (``argv``: ``sys.argv[1:]``).

    A reader that closes the pipe early (``ctxrelay … | head -2``) ends the command
    quietly: the rest of the output goes nowhere and the exit code is 1, never a
    ``BrokenPipeError`` traceback (the recipe of the ``signal`` module's documentation)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        code = _run(args)
        sys.stdout.flush()  # piped output is buffered: the write can fail only here
    except BrokenPipeError:
        # Python flushes stdout again at exit; point it at /dev/null so that is quiet too.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 1
    return code


def _run(args: list[str]) -> int:
    if args and args[0] == "--version":
        sys.stdout.write(f"ctxrelay {__version__}\n")
        return 0
    return dispatch("ctxrelay", COMMANDS, _USAGE, args)
