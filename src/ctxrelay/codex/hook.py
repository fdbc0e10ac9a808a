"""The hook Codex runs for every event ctxrelay installs (``python -m ctxrelay.codex.hook``,
or the isolated start of :mod:`ctxrelay.codex.launcher`).

Codex's hooks take one JSON payload on stdin and answer JSON (or nothing) on stdout;
the dispatch is the core's (:func:`ctxrelay.hooks.dispatch.answer`), the table of
handlers Codex's. It always exits 0 and fails open with one line on stderr: Codex would
skip a failing hook silently anyway, and a broken hook must never break the session.
"""

from __future__ import annotations

import sys
from typing import IO

from ctxrelay.hooks.dispatch import answer

__all__ = ["HANDLERS", "main", "run"]

# hook_event_name -> module with ``handle(payload: dict) -> dict | None``.
HANDLERS: dict[str, str] = {
    "PreToolUse": "ctxrelay.codex._events.pre_tool_use",
    "PostToolUse": "ctxrelay.codex._events.post_tool_use",
    "PostCompact": "ctxrelay.codex._events.post_compact",
    "Stop": "ctxrelay.codex._events.stop",
    "SessionStart": "ctxrelay.codex._events.session_start",
}


def main(stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Answer one hook event; always returns 0."""
    return answer(HANDLERS, "ctxrelay codex hook", stdin, stdout)


def run() -> None:
    """Entry point."""
    sys.exit(main())


if __name__ == "__main__":  # ``python -m ctxrelay.codex.hook``
    run()
