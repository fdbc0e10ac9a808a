"""``ctxrelay claude handoff``: what the handoff skill runs to get a fresh handoff path
(the files themselves: :mod:`ctxrelay.hooks.handoff`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ctxrelay.claude.config import project_dir_of
from ctxrelay.cli._common import ArgumentParser, error, handle_errors, print_json
from ctxrelay.hooks.handoff import (
    drop,
    handoff_dir,
    latest_unconsumed,
    list_handoffs,
    new_handoff_path,
)

__all__ = ["main"]

_DESCRIPTION = """\
Handoff files of this project (.ctxrelay/handoff/).

The handoff skill (/ctxrelay-handoff after 'ctxrelay claude install', /ctxrelay:handoff
from the plugin) runs 'ctxrelay claude handoff new-path' to get the path it asks Claude to
write: a fresh name that no other handoff has, even within one second.

examples:
  ctxrelay claude handoff new-path      reserve and print a fresh handoff path
  ctxrelay claude handoff list --json   the project's handoff files, oldest first
  ctxrelay claude handoff latest        the newest handoff file's path
  ctxrelay claude handoff drop          set aside the handoff waiting for a session, so
                                        no start or /clear offers it again (the file stays;
                                        the same as 'ctxrelay handoff drop')

'ctxrelay handoff' lists, shows, drops and continues handoffs in any agent.
"""


@handle_errors
def main(argv: Sequence[str]) -> int:
    parser = ArgumentParser(
        prog="ctxrelay claude handoff",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "action",
        choices=("new-path", "list", "latest", "drop"),
        help="reserve a fresh path, list the files, print the newest, or drop the waiting one",
    )
    parser.add_argument("--project-dir", metavar="DIR", help="the project (default: .)")
    parser.add_argument("--json", action="store_true", help="print only JSON")
    args = parser.parse_args(list(argv))
    project = (Path(args.project_dir) if args.project_dir else project_dir_of()).resolve()
    if args.action == "new-path":
        path = new_handoff_path(project)
        if args.json:
            print_json({"path": str(path)})
        else:
            sys.stdout.write(f"{path}\n")
        return 0
    if args.action == "drop":
        waiting = latest_unconsumed(project)
        if waiting is None:
            return error(f"no handoff in {handoff_dir(project)} is waiting for a session")
        drop(project, waiting)
        if args.json:
            print_json({"dropped": str(waiting)})
        else:
            sys.stdout.write(f"dropped {waiting}: no session will be offered it\n")
        return 0
    files = list_handoffs(project)
    if args.action == "latest":
        if not files:
            return error(f"no handoff files in {handoff_dir(project)}")
        files = files[-1:]
    if args.json:
        print_json([{"path": str(p), "bytes": p.stat().st_size} for p in files])
    else:
        for p in files:
            sys.stdout.write(f"{p}\n")
    return 0
