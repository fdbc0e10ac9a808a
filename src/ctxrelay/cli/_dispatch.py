"""Pick a subcommand's module from a table and run its ``main``: the one place that
splits ``NAME ARGS...`` off an argv, for ``ctxrelay`` and for ``ctxrelay claude``.

A subcommand module exposes ``main(argv) -> int`` and receives only its own arguments
(never its name). Modules are imported only when they run, so ``ctxrelay policy`` never
pays for the provider SDKs and ``ctxrelay claude statusline`` (which Claude Code runs
after every message) pays for nothing but itself: this module imports light stdlib
modules only (and :mod:`ctxrelay.cli._suggest` and :mod:`ctxrelay.cli._wrap`, which keep
to them too).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping, Sequence
from typing import TypeAlias

from ctxrelay.cli._suggest import suggest
from ctxrelay.cli._wrap import help_width, wrap_help

Table: TypeAlias = Mapping[str, tuple[str, str]]
"""Subcommand name -> (module, one-line help)."""

__all__ = ["dispatch", "usage"]


def usage(template: str, table: Table) -> str:
    """``template`` with ``{commands}`` replaced by the table, one aligned line each."""
    width = max(len(name) for name in table)
    lines = "\n".join(f"  {name.ljust(width)}  {hlp}" for name, (_, hlp) in table.items())
    return template.format(commands=lines)


def dispatch(prog: str, table: Table, template: str, argv: Sequence[str]) -> int:
    """Run ``argv[0]``'s module with the rest of ``argv``. No arguments prints the usage
    and returns 2 (``--help`` prints it and returns 0); an unknown name is one line on
    stderr and 2."""
    args = list(argv)
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(wrap_help(usage(template, table), help_width()) + "\n")
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in table:
        hint = suggest(*prog.split()[1:], "--help")
        sys.stderr.write(f"{prog}: unknown command {name!r}; run '{hint}'\n")
        return 2
    module = importlib.import_module(table[name][0])
    code: int = module.main(rest)
    return code
