"""``ctxrelay claude config``: show or set the main-session handoff mode, the slider and
the window (the settings themselves: :mod:`ctxrelay.claude.config`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ctxrelay.budget.bounds import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_MAIN_HANDOVER,
    DEFAULT_THRESHOLD,
    MAIN_HANDOVERS,
)
from ctxrelay.claude.config import (
    ENV_MAIN_HANDOVER,
    ENV_THRESHOLD,
    Scope,
    config_path,
    load,
    set_value,
)
from ctxrelay.cli._common import ArgumentParser, handle_errors, print_json
from ctxrelay.cli._wrap import wrapped

__all__ = ["OPTION_OF_KEY", "evidence_text", "main"]

_DESCRIPTION = f"""\
Show or set how the main session hands off to a fresh session.

modes:
  manual  (default) at the slider ({DEFAULT_THRESHOLD:g}% of the window unless set), and
          when a task is marked completed, Claude Code shows a hint to run the handoff skill
          (/ctxrelay-handoff after 'ctxrelay claude install', /ctxrelay:handoff from the
          plugin); once for each kind in an episode
  auto    Claude is asked to write the handoff file itself; then the work continues in a
          fresh session by itself: in the interactive UI the auto-handoff mod that
          install puts beside the settings runs /clear and the resume prompt (Claude
          Code 2.1.287 and later; elsewhere you run /clear), and under 'ctxrelay claude
          run' the driver starts the fresh session
  off     nothing

the slider (--threshold P): the handoff point, P percent of the window. Decimals are
allowed; below 10 it is applied as 10 (the floor); 100 (or 'off') turns the hint and
the handoff off, while tool calls are still denied at the usable limit. The statusline
counts down to it. 'ctxrelay analyze --sweep 30..90 --apply' sets it from your own
sessions and writes the evidence beside it; this command shows that evidence.

The environment wins over the files: CTXRELAY_MAIN_HANDOVER, CTXRELAY_THRESHOLD,
CTXRELAY_CONTEXT_WINDOW.

examples:
  ctxrelay claude config                      show the settings and where each comes from
  ctxrelay claude config --mode auto          this project hands off by itself
  ctxrelay claude config --threshold 45       this project hands off at 45% of the window
  ctxrelay claude config --threshold default  back to the user file, else 60
  ctxrelay claude config --mode off --user    off by default for all your projects
  ctxrelay claude config --window 1000000     this project's model has a 1M window
  ctxrelay claude config --window default     back to the statusline / model id
"""


OPTION_OF_KEY = {
    "main_handover": "--mode",
    "threshold": "--threshold",
    "context_window": "--window",
}
"""Each key of the config file's ``claude`` section, by the option that sets it (what the
commands show instead of the file's key)."""


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
        "--threshold",
        metavar="P|off|default",
        help=f"set the slider, percent of the window (decimals allowed; 100 or off = Off); "
        f"'default' unsets it (default: leave it; unset anywhere, it is {DEFAULT_THRESHOLD})",
    )
    parser.add_argument(
        "--window",
        metavar="TOKENS|default",
        help="set the context window; 'default' (or 'auto') unsets it (default: leave it; "
        "unset, the window comes from the statusline, else the model id)",
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
    if args.threshold is not None:
        slider = None if args.threshold.strip().lower() == "default" else args.threshold
        written.append(str(set_value("threshold", slider, scope=scope, project_dir=project)))
    if args.window is not None:
        value = None if args.window.strip().lower() in ("auto", "default") else args.window
        written.append(str(set_value("context_window", value, scope=scope, project_dir=project)))
    # Show what applies in the project now: the environment may override a file.
    cfg = load(project.resolve())
    if args.json:
        out = cfg.as_json()
        budget = cfg.budget(DEFAULT_CONTEXT_WINDOW)
        out["effective_threshold"] = None if budget.off else budget.effective_threshold
        out["off"] = budget.off
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
    lines = [
        f"mode       {cfg.main_handover} ({cfg.main_handover_source})",
        f"threshold  {cfg.slider_text()} ({cfg.threshold_source})",
        f"window     {window}",
    ]
    if cfg.threshold_evidence is not None:
        lines.append(f"           {evidence_text(cfg.threshold_evidence)}")
    lines += [f"written: {path}" for path in sorted(set(written))]
    if cfg.main_handover_source == "env" and written:
        lines.append(f"note: {ENV_MAIN_HANDOVER} is set and overrides the files")
    if cfg.threshold_source == "env" and args.threshold is not None:
        lines.append(f"note: {ENV_THRESHOLD} is set and overrides the files")
    sys.stdout.write(wrapped("\n".join(lines)) + "\n")
    for problem in cfg.problems:
        sys.stderr.write(wrapped(f"ctxrelay: warning: {problem}") + "\n")
    return 0


def evidence_text(evidence: dict[str, Any]) -> str:
    """What ``ctxrelay analyze --apply`` based the slider on, in one sentence."""

    def money(value: object) -> str:
        return f"${value:,.2f}" if isinstance(value, int | float) else "unpriced"

    sessions = evidence.get("sessions")
    first = str(evidence.get("first_timestamp") or "?")[:10]
    last = str(evidence.get("last_timestamp") or "?")[:10]
    applied = str(evidence.get("applied_at") or "?")[:10]
    count = (
        f"{sessions:,} session{'' if sessions == 1 else 's'}"
        if isinstance(sessions, int)
        else "sessions"
    )
    return (
        f"set by ctxrelay analyze --apply on {applied}: {count} from {first} to {last}, "
        f"{money(evidence.get('cost_usd'))} at this slider against "
        f"{money(evidence.get('recorded_cost_usd'))} as recorded (main chains)"
    )
