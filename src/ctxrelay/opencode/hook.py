"""The command ctxrelay's OpenCode plugin runs for each event it forwards:
``<hook> EVENT`` with the event's payload on stdin (``python -I -m
ctxrelay.opencode.hook tool.execute.before``), its answer on stdout.

The dispatch is the core's (:func:`ctxrelay.hooks.dispatch.run`, the event named on the
command line), the events and the answers' encoding OpenCode's
(:mod:`ctxrelay.opencode.host`). It always exits 0 and fails open with one line on
stderr: a broken hook must never break the session (and the plugin fails open on
anything the command does).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import IO

from ctxrelay.hooks.dispatch import run as dispatch
from ctxrelay.opencode.host import OPENCODE

__all__ = ["main", "run"]


def main(
    argv: Sequence[str] | None = None,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
) -> int:
    """Answer one event, named by ``argv``'s first word (else the payload's
    ``hook_event_name``); always returns 0."""
    words = sys.argv[1:] if argv is None else list(argv)
    return dispatch(OPENCODE, stdin, stdout, event=words[0] if words else None)


def run() -> None:
    """Entry point."""
    sys.exit(main())


if __name__ == "__main__":  # ``python -m ctxrelay.opencode.hook EVENT``
    run()
