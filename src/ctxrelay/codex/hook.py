"""The hook Codex runs for every event ctxrelay installs (``python -m ctxrelay.codex.hook``,
or the isolated start of :mod:`ctxrelay.codex.launcher`).

Codex speaks Claude Code's hook protocol: one JSON payload on stdin, Claude Code's
answer JSON (or nothing) on stdout. So the payload and answer types and the deny answer
are :mod:`ctxrelay.claude`'s; only the table of handlers is Codex's. It always exits 0
and fails open with one line on stderr: Codex would skip a failing hook silently anyway,
and a broken hook must never break the session.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import IO, Any

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
    src = sys.stdin if stdin is None else stdin
    out = sys.stdout if stdout is None else stdout
    try:
        payload: Any = json.loads(src.read())
        if not isinstance(payload, dict):
            raise ValueError("the hook payload is not a JSON object")
        module_name = HANDLERS.get(payload.get("hook_event_name"))  # type: ignore[arg-type]
        if module_name is None:
            return 0  # an event ctxrelay does not answer
        answer = importlib.import_module(module_name).handle(payload)
        if answer:
            out.write(json.dumps(answer))
    except Exception as exc:  # fail open: never let an error reach Codex
        sys.stderr.write(f"ctxrelay codex hook: ignored ({type(exc).__name__}: {str(exc)[:200]})\n")
    return 0


def run() -> None:
    """Entry point."""
    sys.exit(main())


if __name__ == "__main__":  # ``python -m ctxrelay.codex.hook``
    run()
