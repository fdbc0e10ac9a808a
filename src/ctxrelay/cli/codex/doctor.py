"""``ctxrelay codex doctor``: prove Codex runs ctxrelay's hooks (the checks themselves:
:mod:`ctxrelay.codex.setup.doctor`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ctxrelay.cli._common import handle_errors, print_doctor, print_json
from ctxrelay.cli.codex._options import scope_of, scope_parser
from ctxrelay.codex.setup.binary import cli_path
from ctxrelay.codex.setup.doctor import Report, doctor
from ctxrelay.codex.setup.install import codex_home

__all__ = ["main"]

_DESCRIPTION = """\
Prove that Codex runs ctxrelay's hooks. Codex skips a hook silently when it fails or is
not trusted, so each one found in your and this project's hooks.json is run as Codex
runs it, on a real payload ('cat' of a big file must come back denied), and Codex is
asked through 'codex app-server' whether it trusts each one.

It exits 0 when everything works, 1 when something is wrong (an untrusted or modified
hook, a project Codex does not trust, a hook that does not work; each problem is one
sentence saying what to do), or when ctxrelay is not installed.

examples:
  ctxrelay codex doctor                          # this project and your hooks
  ctxrelay codex doctor --project-dir ../app     # another project
  ctxrelay codex doctor --json                   # one JSON object, for scripts"""


def _show(report: Report) -> None:
    out = sys.stdout
    if report.codex_cli is None:
        out.write("Codex: not found.\n")
    else:
        out.write(f"Codex {report.codex_version or '(version unknown)'} ({report.codex_cli}).\n")
    for found in report.installed:
        out.write(f"ctxrelay's hooks are in the {found.where} layer, {found.path}.\n")
    lines = [f"{hook.event}: {hook.trust} ({hook.key})." for hook in report.trust]
    print_doctor(
        report.checks, report.problems, lines + [f"Note: {note}." for note in report.notes]
    )


@handle_errors
def main(argv: Sequence[str]) -> int:
    parser = scope_parser("doctor", _DESCRIPTION)
    opts = parser.parse_args(list(argv))
    _, project = scope_of(opts)
    report = doctor(project, codex_home(), cli_path())
    if opts.json:
        print_json(report.as_json())
    else:
        _show(report)
    return 0 if report.ok else 1
