"""``ctxrelay codex config``: show or set the Codex host's slider (the settings
themselves: :mod:`ctxrelay.codex.config`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ctxrelay.budget.bounds import DEFAULT_CONTEXT_WINDOW, DEFAULT_THRESHOLD
from ctxrelay.budget.triggers import main_budget
from ctxrelay.cli._common import ArgumentParser, add_project_dir, handle_errors, print_json
from ctxrelay.codex.config import ENV_THRESHOLD, load, project_root, set_threshold
from ctxrelay.hooks.config import slider_text

__all__ = ["main"]

_DESCRIPTION = f"""\
Show or set the slider of the Codex host: the handoff point, P percent of the model's
window ({DEFAULT_THRESHOLD:g} unless set; decimals allowed; 100 or 'off' = Off). It is
kept beside the Claude Code plugin's settings, under its own "codex" key, in the
project's .ctxrelay/config.json (or, with --user, your ~/.config/ctxrelay/config.json).
{ENV_THRESHOLD} wins over both.

examples:
  ctxrelay codex config                        show the slider and where it comes from
  ctxrelay codex config --threshold 45         this project hands off at 45%
  ctxrelay codex config --threshold default    back to the user file, else {DEFAULT_THRESHOLD:g}
  ctxrelay codex config --threshold 50 --user  50% for all your projects"""


def _parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="ctxrelay codex config",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--threshold", metavar="P|off|default", help="set the slider, percent of the window"
    )
    parser.add_argument("--user", action="store_true", help="set it in the user's file")
    add_project_dir(parser)
    parser.add_argument("--json", action="store_true", help="print only JSON")
    return parser


@handle_errors
def main(argv: Sequence[str]) -> int:
    opts = _parser().parse_args(list(argv))
    project = project_root((opts.project_dir or Path.cwd()).resolve())
    written = None
    if opts.threshold is not None:
        value = None if opts.threshold.strip().lower() == "default" else opts.threshold
        written = set_threshold(value, "user" if opts.user else "project", project)
    config = load(project)
    budget = main_budget(DEFAULT_CONTEXT_WINDOW, config.threshold)
    if opts.json:
        out = {**config.as_json(), "written": None if written is None else str(written)}
        out["effective_threshold"] = None if budget.off else budget.effective_threshold
        out["off"] = budget.off
        print_json(out)
        return 0
    if written is not None:
        sys.stdout.write(f"wrote {written}\n")
    shown = slider_text(config.threshold, "no handoff ask")
    sys.stdout.write(f"threshold: {shown} (from {config.threshold_source})\n")
    for problem in config.problems:
        sys.stdout.write(f"problem: {problem}\n")
    return 0
