"""``ctxrelay <host> config`` for a host with a slider and a handoff mode (the Gemini CLI,
OpenCode): show or set them in the core's config files
(:func:`ctxrelay.hooks.config.load_handoff_settings`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ctxrelay.budget.bounds import DEFAULT_THRESHOLD
from ctxrelay.cli._common import ArgumentParser, add_project_dir, print_json
from ctxrelay.hooks.config import (
    HANDOFF_MODES,
    Scope,
    load_handoff_settings,
    set_handoff_settings,
)

__all__ = ["config_main"]


def _description(host: str, label: str, section: str, env: str, auto: str) -> str:
    return f"""\
Show or set the {label} host's slider (the handoff point, P percent of the model's
window; {DEFAULT_THRESHOLD:g} unless set; 100 or 'off' = Off) and its mode: manual (the
person is told, and types handoff) or auto ({auto}). Kept under the "{section}" key of the
project's .ctxrelay/config.json (or, with --user, your ~/.config/ctxrelay/config.json).
{env} wins over both for the slider.

examples:
  ctxrelay {host} config                         show the settings and where they come from
  ctxrelay {host} config --threshold 45          this project hands off at 45%
  ctxrelay {host} config --mode auto             hand off by itself
  ctxrelay {host} config --threshold default     back to the user file or the default"""


def config_main(
    argv: Sequence[str], *, host: str, label: str, section: str, env: str, auto: str
) -> int:
    """The command for ``host`` (its settings under ``section``, its slider's variable
    ``env``; ``auto`` says what its auto mode does)."""
    parser = ArgumentParser(
        prog=f"ctxrelay {host} config",
        description=_description(host, label, section, env, auto),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--threshold", metavar="P|off|default", help="set the slider, percent of the window"
    )
    parser.add_argument("--mode", choices=HANDOFF_MODES, help="manual (the default) or auto")
    parser.add_argument("--user", action="store_true", help="set it in the user's file")
    add_project_dir(parser)
    parser.add_argument("--json", action="store_true", help="print only JSON")
    opts = parser.parse_args(list(argv))
    project = (opts.project_dir or Path.cwd()).resolve()
    written = None
    if opts.threshold is not None or opts.mode is not None:
        scope: Scope = "user" if opts.user else "project"
        written = set_handoff_settings(
            section, scope, project, threshold=opts.threshold, mode=opts.mode
        )
    config = load_handoff_settings(section, env, project)
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
