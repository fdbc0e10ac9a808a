"""``ctxrelay opencode doctor``: prove OpenCode loads ctxrelay's plugin and each hook
works (the checks themselves: :mod:`ctxrelay.opencode.setup.doctor`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ctxrelay.cli._common import handle_errors, print_json
from ctxrelay.cli.opencode._options import scope_of, scope_parser
from ctxrelay.opencode.setup.binary import cli_path
from ctxrelay.opencode.setup.doctor import Report, doctor

__all__ = ["main"]

_DESCRIPTION = """\
Prove that OpenCode runs ctxrelay's plugin: each copy found in your and this project's
config folder must be loaded by the real OpenCode in this project (opencode debug
config, which calls no model), and its hook command is run as the plugin runs it on a
real payload of each event ('cat' of a big file must come back denied).

It exits 0 when everything works, 1 when something is wrong (each problem is one
sentence saying what to do).

examples:
  ctxrelay opencode doctor                        # this project and your plugin
  ctxrelay opencode doctor --json                 # one JSON object, for scripts"""


def _show(report: Report) -> None:
    out = sys.stdout
    if report.opencode is None:
        out.write("OpenCode: not found.\n")
    else:
        version = report.opencode_version or "(version unknown)"
        out.write(f"OpenCode {version} ({report.opencode}).\n")
    for found in report.installed:
        state = "loaded" if str(found.path) in report.loaded else "NOT LOADED"
        out.write(f"ctxrelay's plugin is in the {found.where} folder, {found.path}: {state}.\n")
    for check in report.checks:
        works = "works" if check.ok else "DOES NOT WORK"
        out.write(f"{check.kind}: {works}: {check.detail}.\n")
    for problem in report.problems:
        out.write(f"Problem: {problem}.\n")
    out.write(
        "Everything works.\n" if report.ok else "Something is wrong: see the problems above.\n"
    )


@handle_errors
def main(argv: Sequence[str]) -> int:
    opts = scope_parser("doctor", _DESCRIPTION).parse_args(list(argv))
    _, project = scope_of(opts)
    report = doctor(project, cli_path())
    if opts.json:
        print_json(report.as_json())
    else:
        _show(report)
    return 0 if report.ok else 1
