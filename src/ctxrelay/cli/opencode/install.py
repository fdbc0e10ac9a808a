"""``ctxrelay opencode install``: ctxrelay's plugin into an OpenCode config folder (what
is written and how: :mod:`ctxrelay.opencode.setup.install`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ctxrelay.cli._common import add_hook_command, handle_errors, print_json
from ctxrelay.cli.opencode._options import scope_of, scope_parser
from ctxrelay.hooks.install.binary import cli_version
from ctxrelay.opencode.setup.binary import cli_path
from ctxrelay.opencode.setup.install import InstallResult, choose_command, install
from ctxrelay.opencode.setup.plugin import OPENCODE_VERSION

__all__ = ["main", "print_result"]

_DESCRIPTION = """\
Write ctxrelay's plugin into an OpenCode config folder: the guard on OpenCode's bash and
read tools, and the events of the handoff. The plugin runs this environment's ctxrelay
by absolute path (python -I -m ctxrelay.opencode.hook EVENT) for each event it needs;
install runs that command on real payloads first and changes nothing when one does not
work (--command overrides it).

OpenCode npm-installs its plugin package into a config folder with a plugin at every
start, which stalls the start and fails without a network; the plugin needs no package,
so install also writes what stops that (package.json, package-lock.json, an empty
node_modules) where the folder has none of it. What install wrote is recorded in
ctxrelay-install.json beside it, for uninstall.

examples:
  ctxrelay opencode install                        # this project: .opencode/
  ctxrelay opencode install --project-dir ../app   # another project
  ctxrelay opencode install --user                 # every project: ~/.config/opencode/"""


def print_result(result: InstallResult, as_json: bool) -> None:
    """What install or uninstall changed, in sentences (or one JSON object)."""
    if as_json:
        print_json(result.as_json())
        return
    for change in result.changes:
        sys.stdout.write(f"ctxrelay {change}\n")
    if not result.changes:
        sys.stdout.write(f"nothing to do: {result.plugin} is already as it should be\n")
    if result.command:
        sys.stdout.write(f"the plugin runs: {result.command} EVENT\n")
    for note in result.notes:
        sys.stdout.write(f"note: {note}\n")


@handle_errors
def main(argv: Sequence[str]) -> int:
    parser = scope_parser("install", _DESCRIPTION)
    add_hook_command(parser)
    opts = parser.parse_args(list(argv))
    scope, project = scope_of(opts)
    command = choose_command(opts.command)
    cli = cli_path()
    version = (cli_version(cli) if cli is not None else None) or OPENCODE_VERSION
    print_result(install(scope, project, command, version), opts.json)
    return 0
