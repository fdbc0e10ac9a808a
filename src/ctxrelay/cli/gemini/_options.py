"""What the ``ctxrelay gemini`` subcommands share: the scope options."""

from __future__ import annotations

import argparse
from pathlib import Path

from ctxrelay.cli._common import ArgumentParser, add_project_dir

__all__ = ["scope_of", "scope_parser"]


def scope_parser(name: str, description: str) -> ArgumentParser:
    """The options install, uninstall and doctor share: which file, which project."""
    parser = ArgumentParser(
        prog=f"ctxrelay gemini {name}",
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--project", action="store_true", help="the project's .gemini/settings.json (the default)"
    )
    scope.add_argument("--user", action="store_true", help="the user's ~/.gemini/settings.json")
    add_project_dir(parser)
    parser.add_argument("--json", action="store_true", help="print only JSON")
    return parser


def scope_of(opts: argparse.Namespace) -> tuple[str, Path]:
    """The scope and the project directory the options name."""
    return ("user" if opts.user else "project"), (opts.project_dir or Path.cwd()).resolve()
