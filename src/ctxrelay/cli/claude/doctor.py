"""``ctxrelay claude doctor``: check the installed commands (the checks themselves:
:mod:`ctxrelay.claude.doctor`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from ctxrelay.claude.doctor import doctor
from ctxrelay.cli._common import handle_errors, print_json
from ctxrelay.cli.claude.install import scope_parser

__all__ = ["main"]

_DESCRIPTION = """\
Check that the hook runs and fails open, how long it takes against a bare
python, which Claude Code is present, and where the hooks are installed.

It exits 0 when the hook works (even if the hooks are not installed yet: that is
reported, not a failure), 1 when something is broken.

examples:
  ctxrelay claude doctor                          # this project
  ctxrelay claude doctor --project-dir ../app     # another project
  ctxrelay claude doctor --json                   # one JSON object, for scripts"""


@handle_errors
def main(argv: Sequence[str]) -> int:
    opts = scope_parser("doctor", _DESCRIPTION).parse_args(list(argv))
    project = (opts.project_dir or Path.cwd()).resolve()
    report = doctor(project, Path.home())
    if opts.json:
        print_json(report)
    else:
        for key, value in report.items():
            if key != "problems":
                sys.stdout.write(f"{key:15} {value}\n")
        for problem in report["problems"]:
            sys.stdout.write(f"problem         {problem}\n")
    return 0 if report["ok"] else 1
