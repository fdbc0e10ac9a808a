"""``ctxrelay opencode uninstall``: take out what install wrote, leaving the config
folder as it was found (:func:`ctxrelay.opencode.setup.install.uninstall`)."""

from __future__ import annotations

from collections.abc import Sequence

from ctxrelay.cli._common import handle_errors
from ctxrelay.cli.opencode._options import scope_of, scope_parser
from ctxrelay.cli.opencode.install import print_result
from ctxrelay.opencode.setup.install import uninstall

__all__ = ["main"]

_DESCRIPTION = """\
Remove ctxrelay's plugin from an OpenCode config folder, with what install wrote beside
it so that OpenCode loads it offline; a folder install created goes once empty. A plugin
file changed since install is left where it is.

examples:
  ctxrelay opencode uninstall                  # this project
  ctxrelay opencode uninstall --user           # the user's ~/.config/opencode"""


@handle_errors
def main(argv: Sequence[str]) -> int:
    opts = scope_parser("uninstall", _DESCRIPTION).parse_args(list(argv))
    scope, project = scope_of(opts)
    print_result(uninstall(scope, project), opts.json)
    return 0
