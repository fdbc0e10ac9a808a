"""``ctxrelay claude uninstall``: remove exactly what install added."""

from __future__ import annotations

from collections.abc import Sequence

from ctxrelay.claude.setup.install import uninstall
from ctxrelay.cli._common import handle_errors
from ctxrelay.cli.claude.install import print_result, scope_parser, settings_of

__all__ = ["main"]

_DESCRIPTION = """\
Remove exactly what 'ctxrelay claude install' added, restoring what the
snippet replaced (a value changed since install is kept).

examples:
  ctxrelay claude uninstall                        # this project
  ctxrelay claude uninstall --project-dir ../app   # another project
  ctxrelay claude uninstall --user                 # ~/.claude/settings.json

Settings files you changed after install keep your values; a copied agent or skill you
edited is kept and listed."""


@handle_errors
def main(argv: Sequence[str]) -> int:
    opts = scope_parser("uninstall", _DESCRIPTION).parse_args(list(argv))
    _, path = settings_of(opts)
    print_result(uninstall(path), "removed from", opts.json)
    return 0
