"""``ctxrelay codex uninstall``: remove ctxrelay's hooks and their trust records."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress

from ctxrelay.cli._common import handle_errors
from ctxrelay.cli.codex._options import scope_of, scope_parser
from ctxrelay.cli.codex.install import print_result
from ctxrelay.codex.setup.binary import cli_path
from ctxrelay.codex.setup.install import (
    codex_home,
    hooks_path,
    installed_commands,
    uninstall_hooks,
)
from ctxrelay.errors import ConfigError

__all__ = ["main"]

_DESCRIPTION = """\
Remove what 'ctxrelay codex install' added: the trust records of ctxrelay's hooks in
your config.toml (through 'codex app-server', as /hooks would), then the hooks.

examples:
  ctxrelay codex uninstall                        # this project
  ctxrelay codex uninstall --user                 # $CODEX_HOME/hooks.json

A hooks.json still as install left it gets back the very bytes it had before (or goes,
when install created it); one you changed since keeps your changes, and only ctxrelay's
hooks leave it. A config.toml that install's trust created goes once it is empty."""


@handle_errors
def main(argv: Sequence[str]) -> int:
    opts = scope_parser("uninstall", _DESCRIPTION).parse_args(list(argv))
    scope, project = scope_of(opts)
    home = codex_home()
    result = uninstall_hooks(scope, project, home, cli_path())
    user = hooks_path("user", project, home)
    left = False
    with suppress(ConfigError):
        left = scope == "project" and bool(installed_commands(user))
    if left:
        result.notes.append(
            f"ctxrelay's hooks in the user layer ({user}) remain "
            "and still run in this project: 'ctxrelay codex uninstall --user' removes them"
        )
    print_result(result, "removed from", opts.json)
    return 0
