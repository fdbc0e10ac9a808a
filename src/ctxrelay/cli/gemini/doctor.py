"""``ctxrelay gemini doctor``: prove the Gemini CLI runs ctxrelay's hooks (the checks
themselves: :mod:`ctxrelay.gemini.setup.doctor`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ctxrelay.cli._common import handle_errors, print_doctor, print_json
from ctxrelay.cli.gemini._options import scope_of, scope_parser
from ctxrelay.gemini.setup.binary import cli_path
from ctxrelay.gemini.setup.doctor import Report, doctor

__all__ = ["main"]

_DESCRIPTION = """\
Prove that the Gemini CLI runs ctxrelay's hooks: each one found in your and this
project's settings.json is run as the CLI runs it, on a real payload ('cat' of a big
file must come back denied), and the folder's trust is read the way the CLI decides it
(in an untrusted folder it runs no hooks at all).

It exits 0 when everything works, 1 when something is wrong (each problem is one
sentence saying what to do).

examples:
  ctxrelay gemini doctor                          # this project and your hooks
  ctxrelay gemini doctor --json                   # one JSON object, for scripts"""


def _show(report: Report) -> None:
    out = sys.stdout
    if report.gemini_cli is None:
        out.write("Gemini CLI: not found.\n")
    else:
        version = report.gemini_version or "(version unknown)"
        out.write(f"Gemini CLI {version} ({report.gemini_cli}).\n")
    out.write(f"This folder is {report.trust} in the Gemini CLI.\n")
    for found in report.installed:
        out.write(f"ctxrelay's hooks are in the {found.where} settings, {found.path}.\n")
    print_doctor(report.checks, report.problems)


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
