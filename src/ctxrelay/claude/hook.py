"""``ctxrelay-hook``: the one entry point Claude Code runs for every hook event.

It is the core's dispatch (:func:`ctxrelay.hooks.dispatch.answer`) over Claude Code's
events: one payload on stdin, handed to the handler module of its event (imported only
for that event), and Claude Code's hook JSON, or nothing, on stdout. It always exits 0
and fails open with one line on stderr.
"""

from __future__ import annotations

import sys
from typing import IO

from ctxrelay.hooks.dispatch import answer

__all__ = ["HANDLERS", "main", "run"]

# hook_event_name -> module with ``handle(payload: dict) -> dict | None``.
HANDLERS: dict[str, str] = {
    "PreToolUse": "ctxrelay.claude._events.pre_tool_use",
    "PostToolUse": "ctxrelay.claude._events.post_tool_use",
    "SubagentStop": "ctxrelay.claude._events.subagent_stop",
    "UserPromptSubmit": "ctxrelay.claude._events.user_prompt_submit",
    "Stop": "ctxrelay.claude._events.stop",
    "SessionStart": "ctxrelay.claude._events.session_start",
}


def main(stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Answer one hook event; always returns 0."""
    return answer(HANDLERS, "ctxrelay-hook", stdin, stdout)


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":  # ``python -m ctxrelay.claude.hook``
    run()
