"""The hook Codex runs for every event ctxrelay installs (``python -I -m
ctxrelay.codex.hook``, :mod:`ctxrelay.codex.launcher`).

Codex speaks Claude Code's hook protocol: one JSON payload on stdin, Claude Code's
answer JSON (or nothing) on stdout. So the payload and answer types and the deny answer
are :mod:`ctxrelay.claude`'s, and so is the dispatch
(:func:`ctxrelay.claude.hook.answer`); only the table of handlers is Codex's. It always
exits 0 and fails open with one line on stderr: Codex would skip a failing hook silently
anyway, and a broken hook must never break the session.
"""

from __future__ import annotations

import sys
from typing import IO

from ctxrelay.claude.hook import answer

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
