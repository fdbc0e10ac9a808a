"""``ctxrelay opencode config``: show or set the OpenCode host's slider and handoff mode (the
settings themselves: :mod:`ctxrelay.opencode.config`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ctxrelay.budget.bounds import DEFAULT_THRESHOLD
from ctxrelay.cli._common import ArgumentParser, add_project_dir, handle_errors, print_json
from ctxrelay.opencode.config import ENV_THRESHOLD, MODES, load, set_values

__all__ = ["main"]

_DESCRIPTION = f"""\
Show or set the OpenCode host's slider (the handoff point, P percent of the model's
window; {DEFAULT_THRESHOLD:g} unless set; 100 or 'off' = Off) and its mode: manual (the
person is told, and types handoff) or auto (the agent writes the handoff file and the
work continues from it in a fresh session by itself). Kept under the "opencode" key of the
project's .ctxrelay/config.json (or, with --user, your ~/.config/ctxrelay/config.json).
{ENV_THRESHOLD} wins over both for the slider.

examples:
  ctxrelay opencode config                         show the settings and where they come from
  ctxrelay opencode config --threshold 45          this project hands off at 45%
  ctxrelay opencode config --mode auto             hand off by itself
  ctxrelay opencode config --threshold default     back to the user file or the default"""


def _parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="ctxrelay opencode config",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--threshold", metavar="P|off|default", help="set the slider, percent of the window"
    )
    parser.add_argument("--mode", choices=MODES, help="manual (the default) or auto")
    parser.add_argument("--user", action="store_true", help="set it in the user's file")
    add_project_dir(parser)
    parser.add_argument("--json", action="store_true", help="print only JSON")
    return parser


@handle_errors
def main(argv: Sequence[str]) -> int:
    opts = _parser().parse_args(list(argv))
    project = (opts.project_dir or Path.cwd()).resolve()
    written = None
    if opts.threshold is not None or opts.mode is not None:
        written = set_values(
            "user" if opts.user else "project", project, threshold=opts.threshold, mode=opts.mode
        )
    config = load(project)
    if opts.json:
        print_json({**config.as_json(), "written": None if written is None else str(written)})
        return 0
    if written is not None:
        sys.stdout.write(f"wrote {written}\n")
    shown = config.as_json()["threshold"]
    sys.stdout.write(f"threshold: {shown}% of the window (from {config.threshold_source})\n")
    sys.stdout.write(f"mode: {config.mode}\n")
    for problem in config.problems:
        sys.stdout.write(f"problem: {problem}\n")
    return 0
