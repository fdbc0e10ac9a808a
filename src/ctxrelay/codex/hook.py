"""The hook Codex runs for every event ctxrelay installs (``python -I -m
ctxrelay.codex.hook``, :mod:`ctxrelay.codex.setup.launcher`).

Codex's hooks take one JSON payload on stdin and answer JSON (or nothing) on stdout;
the dispatch is the core's (:func:`ctxrelay.hooks.dispatch.run`), the events and the
answers' encoding Codex's (:mod:`ctxrelay.codex.host`). It always exits 0 and fails
open with one line on stderr: Codex would skip a failing hook silently anyway, and a
broken hook must never break the session.
"""

from __future__ import annotations

import sys
from typing import IO

from ctxrelay.codex.host import CODEX
from ctxrelay.hooks.dispatch import run as dispatch

__all__ = ["main", "run"]


def main(stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Answer one hook event; always returns 0."""
    return dispatch(CODEX, stdin, stdout)


def run() -> None:
    """Entry point."""
    sys.exit(main())


if __name__ == "__main__":  # ``python -m ctxrelay.codex.hook``
    run()
