"""``ctxrelay gemini install``: ctxrelay's hooks into the Gemini CLI's ``settings.json``
(what is written and how: :mod:`ctxrelay.gemini.setup.install`)."""

from __future__ import annotations

from collections.abc import Sequence

from ctxrelay.cli._common import add_hook_command, handle_errors, print_install, print_json
from ctxrelay.cli.gemini._options import scope_of, scope_parser
from ctxrelay.gemini.setup.install import InstallResult, choose_command, install

__all__ = ["main", "print_result"]

_DESCRIPTION = """\
Add ctxrelay's hooks to the Gemini CLI's settings.json: the guard on its shell and
read_file tools (BeforeTool, AfterTool) and the handoff (BeforeAgent, AfterAgent).

examples:
  ctxrelay gemini install                          # this project: .gemini/settings.json
  ctxrelay gemini install --project-dir ../app     # another project
  ctxrelay gemini install --user                   # every folder: ~/.gemini/settings.json

The hooks run this environment's ctxrelay by absolute path (python -I -m
ctxrelay.gemini.hook); install runs each on real payloads first and changes nothing when
one does not work (--command overrides it). Our groups are appended, so your own hooks
stay as they are; the file as it was is kept beside it (one backup, and
ctxrelay-install.json) for uninstall. The CLI runs no hooks in a folder it does not
trust: a project install there changes nothing and says to trust the folder in the CLI
first. ctxrelay never trusts a folder for you."""


def print_result(result: InstallResult, verb: str, as_json: bool) -> None:
    """What install or uninstall changed, in sentences (or one JSON object)."""
    if as_json:
        print_json(result.as_json())
        return
    print_install(
        result.settings, verb, changed=result.changed, command=result.command, notes=result.notes
    )


@handle_errors
def main(argv: Sequence[str]) -> int:
    parser = scope_parser("install", _DESCRIPTION)
    add_hook_command(parser)
    opts = parser.parse_args(list(argv))
    scope, project = scope_of(opts)
    result = install(scope, project, choose_command(opts.command))
    print_result(result, "installed into", opts.json)
    return 0
