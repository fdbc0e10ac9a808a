"""``ctxrelay claude config``: show or set the main-session handoff mode and the window
(the settings themselves: :mod:`ctxrelay.claude.config`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ctxrelay.budget.bounds import DEFAULT_MAIN_HANDOVER, MAIN_HANDOVERS
from ctxrelay.claude.config import ENV_MAIN_HANDOVER, Scope, config_path, load, set_value
from ctxrelay.cli._common import ArgumentParser, handle_errors, print_json

__all__ = ["main"]

_DESCRIPTION = """\
Show or set how the main session hands off to a fresh session.

modes:
  manual  (default) at 60% of the window, and when a task is marked completed, Claude Code
          shows a hint to run the handoff skill (/ctxrelay-handoff after 'ctxrelay claude
          install', /ctxrelay:handoff from the plugin); once for each kind in an episode
  auto    Claude is asked to write the handoff file itself; then the work continues in a
          fresh session (by itself under 'ctxrelay claude run', after /clear interactively)
  off     nothing

The environment wins over the files: CTXRELAY_MAIN_HANDOVER, CTXRELAY_CONTEXT_WINDOW.

examples:
  ctxrelay claude config                      show the settings and where each comes from
  ctxrelay claude config --mode auto          this project hands off by itself
  ctxrelay claude config --mode off --user    off by default for all your projects
  ctxrelay claude config --window 1000000     this project's model has a 1M window
  ctxrelay claude config --window auto        back to the statusline / model id
"""


def _parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="ctxrelay claude config",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--mode",
        choices=MAIN_HANDOVERS,
        help=f"set the handoff mode (default: leave it; unset anywhere, it is "
        f"{DEFAULT_MAIN_HANDOVER})",
    )
    parser.add_argument(
        "--window",
        metavar="TOKENS|auto",
        help="set the context window; 'auto' unsets it (default: leave it; unset, the "
        "window comes from the statusline, else the model id)",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--project", action="store_true", help="write the project file (the default)"
    )
    where.add_argument("--user", action="store_true", help="write the user file")
    parser.add_argument("--project-dir", metavar="DIR", help="the project (default: .)")
    parser.add_argument("--json", action="store_true", help="print only JSON")
    return parser


@handle_errors
def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    project = Path(args.project_dir) if args.project_dir else Path.cwd()
    scope: Scope = "user" if args.user else "project"
    written: list[str] = []
    if args.mode is not None:
        written.append(str(set_value("main_handover", args.mode, scope=scope, project_dir=project)))
    if args.window is not None:
        value = None if args.window.strip().lower() == "auto" else args.window
        written.append(str(set_value("context_window", value, scope=scope, project_dir=project)))
    # Show what applies in the project now: the environment may override a file.
    cfg = load(project.resolve())
    if args.json:
        out = cfg.as_json()
        out["written"] = sorted(set(written))
        out["files"] = {
            "project": str(config_path("project", project.resolve())),
            "user": str(config_path("user")),
        }
        print_json(out)
        return 0
    window = (
        f"{cfg.context_window:,} tokens ({cfg.context_window_source})"
        if cfg.context_window
        else "from the statusline, else the model id"
    )
    sys.stdout.write(
        f"main_handover   {cfg.main_handover} ({cfg.main_handover_source})\n"
        f"context_window  {window}\n"
    )
    for path in sorted(set(written)):
        sys.stdout.write(f"written: {path}\n")
    if cfg.main_handover_source == "env" and written:
        sys.stdout.write(f"note: {ENV_MAIN_HANDOVER} is set and overrides the files\n")
    for problem in cfg.problems:
        sys.stderr.write(f"ctxrelay: warning: {problem}\n")
    return 0
