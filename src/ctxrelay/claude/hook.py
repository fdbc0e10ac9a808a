"""``ctxrelay-hook``: the one entry point Claude Code runs for every hook event.

It reads one payload on stdin, hands it to the handler module of its event (imported
only for that event), and writes Claude Code's hook JSON, or nothing, on stdout. It always
exits 0: on malformed input or any failure it fails open, silently to Claude, with one
line on stderr. A broken hook must never break the user's session.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Mapping
from typing import IO, Any

__all__ = ["HANDLERS", "answer", "main", "run"]

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


def answer(
    handlers: Mapping[str, str],
    name: str,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
) -> int:
    """Read one payload, hand it to the module ``handlers`` names for its event, write the
    module's answer; always returns 0 (``name`` leads the one stderr line of a failure).
    Shared by every host that speaks Claude Code's hook protocol."""
    src = sys.stdin if stdin is None else stdin
    out = sys.stdout if stdout is None else stdout
    try:
        payload: Any = json.loads(src.read())
        if not isinstance(payload, dict):
            raise ValueError("the hook payload is not a JSON object")
        event = payload.get("hook_event_name")
        if not isinstance(event, str):
            raise ValueError("the hook payload has no hook_event_name string")
        module_name = handlers.get(event)
        if module_name is None:
            return 0  # an event ctxrelay does not answer: nothing to say
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            return 0  # an event this version does not handle yet
        reply = module.handle(payload)
        if reply:
            out.write(json.dumps(reply))
    except Exception as exc:  # fail open: never let an error reach the host
        kind = type(exc).__name__
        sys.stderr.write(f"{name}: ignored ({kind}: {str(exc)[:200]})\n")
    return 0


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":  # ``python -m ctxrelay.claude.hook``
    run()
