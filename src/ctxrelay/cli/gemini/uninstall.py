"""``ctxrelay gemini uninstall``: take out what install added, leaving ``settings.json``
as it was found (:func:`ctxrelay.gemini.setup.install.uninstall`)."""

from __future__ import annotations

from collections.abc import Sequence

from ctxrelay.cli._common import handle_errors
from ctxrelay.cli.gemini._options import scope_of, scope_parser
from ctxrelay.cli.gemini.install import print_result
from ctxrelay.gemini.setup.install import uninstall

__all__ = ["main"]

_DESCRIPTION = """\
Remove ctxrelay's hooks from the Gemini CLI's settings.json: the file goes back to the
very bytes install found (or goes, if install created it) when nothing else changed it
since; otherwise only ctxrelay's hooks are taken out.

examples:
  ctxrelay gemini uninstall                  # this project
  ctxrelay gemini uninstall --user           # the user's ~/.gemini/settings.json"""


@handle_errors
def main(argv: Sequence[str]) -> int:
    opts = scope_parser("uninstall", _DESCRIPTION).parse_args(list(argv))
    scope, project = scope_of(opts)
    print_result(uninstall(scope, project), "removed its hooks from", opts.json)
    return 0
