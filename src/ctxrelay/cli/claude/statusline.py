"""``ctxrelay claude statusline``: what Claude Code runs as its ``statusLine`` command
(the line itself: :mod:`ctxrelay.claude.extras.statusline`).

It runs after every message, so it imports the stdlib only (no argparse, no rich) and
never fails: bad input prints a short line and exits 0 (a non-zero exit blanks the
user's statusline).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import IO

from ctxrelay.claude.extras.statusline import status_line
from ctxrelay.cli._wrap import help_width, wrap_help

__all__ = ["main"]

_HELP = """\
usage: ctxrelay claude statusline < statusline.json

Claude Code runs this as its statusLine command ('ctxrelay claude install' sets
it up): it reads the statusline JSON on stdin and prints the context share, a
bar, and the tokens left to the handoff target. It also records the window
size for the hooks.

example:
  echo '{"context_window": {"context_window_size": 200000,
         "current_usage": {"input_tokens": 90000}}}' |
    ctxrelay claude statusline
"""


def main(argv: Sequence[str], stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    out = sys.stdout if stdout is None else stdout
    if argv and argv[0] in ("-h", "--help"):
        out.write(wrap_help(_HELP, help_width()) + "\n")
        return 0
    src = sys.stdin if stdin is None else stdin
    try:
        line = status_line(json.loads(src.read() or "null"))
    except Exception as exc:  # never blank the statusline with a traceback
        line = f"ctxrelay: statusline input not understood ({type(exc).__name__})"
    out.write(line + "\n")
    return 0
