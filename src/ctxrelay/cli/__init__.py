"""The ``ctxrelay`` command. Each subcommand lives in its own module and is imported
only when it runs, so ``ctxrelay policy`` never pays for the provider SDKs."""

from __future__ import annotations

import sys

from ctxrelay.cli._dispatch import dispatch

TYPE_CHECKING = False  # annotations only; mypy reads any constant named TYPE_CHECKING as true
if TYPE_CHECKING:
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI in-process and return its exit code.

    Called as the process's entry point (``argv`` not given), a command whose work left
    nothing to close ends the process here instead (:func:`_end`)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "--version":
        from ctxrelay import __version__

        sys.stdout.write(f"ctxrelay {__version__}\n")
        return 0
    code = dispatch("ctxrelay", COMMANDS, _USAGE, args)
    if argv is None and args[:1] == ["analyze"]:
        analyze = sys.modules["ctxrelay.cli.analyze"]
        if analyze.skips_teardown(args[1:]):
            _end(code)
    return code


def _end(code: int) -> None:
    """End the process now, without the interpreter's teardown: freeing every module and
    record one by one and a last cycle collection, which after ``ctxrelay analyze
    --json`` costs about 3 ms on the reference machine (``docs/analyze.md``, "How it
    reads").
    Only for a command that opened nothing that needs closing; the output is flushed
    first, and if that fails the normal exit reports it."""
    import os

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(code)
