"""What the ``ctxrelay codex`` subcommands share: the scope options and a quiet exit
when the reader of stdout goes away (``ctxrelay codex doctor | head -1``)."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from ctxrelay.cli._common import ArgumentParser

__all__ = ["EXIT_PIPE", "quiet_pipe", "scope_of", "scope_parser"]

EXIT_PIPE = 141
"""What a shell reports for a program stopped by a closed pipe (128 + SIGPIPE)."""


def quiet_pipe(main: Callable[[Sequence[str]], int]) -> Callable[[Sequence[str]], int]:
    """``main`` exiting quietly, with :data:`EXIT_PIPE`, when stdout is closed under it."""

    @functools.wraps(main)
    def wrapper(argv: Sequence[str]) -> int:
        try:
            code = main(argv)
            sys.stdout.flush()
        except BrokenPipeError:
            # Point stdout at /dev/null so the interpreter's flush at exit cannot fail again.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
            return EXIT_PIPE
        return code

    return wrapper


def scope_parser(name: str, description: str) -> ArgumentParser:
    """The options install, uninstall and doctor share: which layer, which project."""
    parser = ArgumentParser(
        prog=f"ctxrelay codex {name}",
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--project", action="store_true", help="the project's .codex/hooks.json (the default)"
    )
    scope.add_argument("--user", action="store_true", help="the user's $CODEX_HOME/hooks.json")
    parser.add_argument(
        "--project-dir",
        dest="project_dir",
        type=Path,
        metavar="DIR",
        default=None,
        help="the project (default: the current directory)",
    )
    parser.add_argument("--json", action="store_true", help="print only JSON")
    return parser


def scope_of(opts: argparse.Namespace) -> tuple[str, Path]:
    """The scope and the project directory the options name."""
    return ("user" if opts.user else "project"), (opts.project_dir or Path.cwd()).resolve()
