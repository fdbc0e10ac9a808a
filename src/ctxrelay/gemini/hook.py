"""The hook the Gemini CLI runs for every event ctxrelay installs (``python -I -m
ctxrelay.gemini.hook``, :mod:`ctxrelay.gemini.setup.launcher`).

The dispatch is the core's (:func:`ctxrelay.hooks.dispatch.run`), the events and the
answers' encoding the Gemini CLI's (:mod:`ctxrelay.gemini.host`). It always exits 0 and
fails open with one line on stderr: a broken hook must never break the session.
"""

from __future__ import annotations

import sys
from typing import IO

from ctxrelay.gemini.host import GEMINI
from ctxrelay.hooks.dispatch import run as dispatch

__all__ = ["main", "run"]


def main(stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Answer one hook event; always returns 0."""
    return dispatch(GEMINI, stdin, stdout)


def run() -> None:
    """Entry point."""
    sys.exit(main())


if __name__ == "__main__":  # ``python -m ctxrelay.gemini.hook``
    run()
