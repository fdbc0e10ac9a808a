"""``ctxrelay-hook``: the one entry point Claude Code runs for every hook event.

It is the core's dispatch (:func:`ctxrelay.hooks.dispatch.run`) over Claude Code's
events (:data:`ctxrelay.claude.host.CLAUDE`): one payload on stdin, handed to the handler
module of its event (imported only for that event), and its answer as Claude Code's hook
JSON, or nothing, on stdout. It always exits 0
and fails open with one line on stderr.
"""

from __future__ import annotations

import sys
from typing import IO

from ctxrelay.claude.host import CLAUDE
from ctxrelay.hooks.dispatch import run as dispatch

__all__ = ["main", "run"]


def main(stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Answer one hook event; always returns 0."""
    return dispatch(CLAUDE, stdin, stdout)


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":  # ``python -m ctxrelay.claude.hook``
    run()
