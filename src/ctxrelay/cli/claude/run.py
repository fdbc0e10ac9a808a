"""``ctxrelay claude run "task"``: run a task headless, handing off to fresh sessions
(the driver itself: :mod:`ctxrelay.claude.extras.driver`)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ctxrelay.budget.bounds import DEFAULT_THRESHOLD, MAIN_HANDOVERS
from ctxrelay.claude.extras.driver import MAX_SESSIONS, DriverOptions, Emit, run_task
from ctxrelay.cli._common import ArgumentParser, handle_errors, print_json
from ctxrelay.errors import ConfigError

__all__ = ["main"]

_DESCRIPTION = f"""\
Run a task headless in Claude Code; when the session hands off, continue in a fresh
session that resumes from the handoff file, until the task is done.

The ctxrelay hooks must be installed ('ctxrelay claude install', or --plugin-dir). With
--mode auto (or 'ctxrelay claude config --mode auto') the Stop hook asks Claude to write
.ctxrelay/handoff/handoff-<UTC time>.md at the slider ({DEFAULT_THRESHOLD:g}% of the window unless
'ctxrelay claude config --threshold' says otherwise) or when a task is completed, and this
command starts the fresh session with the resume prompt.

It exits 0 when the task is done, 1 when it stopped at --max-sessions or on an error.
--json prints one event per line: session, text, tool, result, handoff, end.

examples:
  ctxrelay claude run --mode auto "migrate the tests to pytest"
  ctxrelay claude run --mode auto --max-sessions 3 --json "fix the failing build"
  ctxrelay claude run --project-dir ../app --model claude-sonnet-4-5 "add a CLI flag"
  ctxrelay claude run --plugin-dir ./plugin "..."   (hooks from a plugin, not settings)
  ctxrelay claude run --permission-mode bypassPermissions "..."   (sandboxes only)
"""


def _parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="ctxrelay claude run",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("task", help="what Claude should do")
    parser.add_argument(
        "--mode",
        choices=MAIN_HANDOVERS,
        help="handoff mode for this run (default: the configured one, see "
        "'ctxrelay claude config')",
    )
    parser.add_argument("--model", help="the model (default: Claude Code's)")
    parser.add_argument("--project-dir", metavar="DIR", help="where to work (default: .)")
    parser.add_argument(
        "--permission-mode",
        default="acceptEdits",
        choices=("default", "acceptEdits", "plan", "bypassPermissions"),
        metavar="MODE",  # the choices in the usage line would pass 80 columns
        help="Claude Code's permission mode: %(choices)s (default: %(default)s)",
    )
    parser.add_argument(
        "--max-sessions",
        type=int,
        default=MAX_SESSIONS,
        metavar="N",
        help="fresh sessions at most, the first included (default: %(default)s)",
    )
    parser.add_argument(
        "--max-turns", type=int, metavar="N", help="turns per prompt at most (default: no limit)"
    )
    parser.add_argument(
        "--claude",
        metavar="PATH",
        help="the Claude Code CLI to run (default: the one bundled with claude-agent-sdk)",
    )
    parser.add_argument(
        "--plugin-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="load a plugin directory; repeat for more (default: none, the installed "
        "settings bring the hooks)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON event per line")
    return parser


def _printer(as_json: bool) -> Emit:
    def emit(event: dict[str, Any]) -> None:
        if as_json:
            print_json(event)
            return
        kind = event["event"]
        if kind == "session":
            sys.stdout.write(f"── session {event['session']}\n")
        elif kind == "text":
            sys.stdout.write(f"{event['text']}\n")
        elif kind == "tool":
            sys.stdout.write(f"  · {event['name']}\n")
        elif kind == "handoff":
            sys.stdout.write(f"── handoff: {event['path']} → fresh session\n")
        elif kind == "end":
            sys.stdout.write(
                f"── {event['status']} after {len(event['sessions'])} session(s), "
                f"{len(event['handoffs'])} handoff(s)\n"
            )
        sys.stdout.flush()

    return emit


@handle_errors
def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    if args.max_sessions < 1:
        raise ConfigError("--max-sessions must be at least 1")
    project = Path(args.project_dir or os.getcwd()).resolve()
    if not project.is_dir():
        raise ConfigError(f"the project directory {project} does not exist")
    options = DriverOptions(
        project_dir=project,
        model=args.model,
        mode=args.mode,
        permission_mode=args.permission_mode,
        max_sessions=args.max_sessions,
        max_turns=args.max_turns,
        cli_path=Path(args.claude) if args.claude else None,
        plugin_dirs=tuple(Path(p).resolve() for p in args.plugin_dir),
    )
    outcome = asyncio.run(run_task(args.task, options, _printer(args.json)))
    return 0 if outcome.status == "completed" else 1
