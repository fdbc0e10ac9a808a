"""The one dispatch of a hook process, for every host whose hooks are commands: read one
JSON payload on stdin, hand it to the handler module its host names for the event, and
write the handler's :class:`~ctxrelay.hooks.host.Answer`, encoded as the host reads it
(or nothing), on stdout.

It always returns 0: on malformed input or any failure it fails open, silently to the
host, with one line on stderr. A broken hook must never break the user's session.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import IO, Any

from ctxrelay.hooks.host import Host

__all__ = ["run"]


def run(
    host: Host,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
    *,
    event: str | None = None,
) -> int:
    """Answer one hook event of ``host``: the payload's ``hook_event_name``, or ``event``
    where the host names it outside the payload (a plugin that runs one command per
    event). Always returns 0; a failure is one stderr line led by the host's name."""
    src = sys.stdin if stdin is None else stdin
    out = sys.stdout if stdout is None else stdout
    try:
        payload: Any = json.loads(src.read())
        if not isinstance(payload, dict):
            raise ValueError("the hook payload is not a JSON object")
        name = event if event is not None else payload.get("hook_event_name")
        if not isinstance(name, str):
            raise ValueError("the hook payload has no hook_event_name string")
        handler = host.handlers.get(name)
        if handler is None:
            return 0  # an event ctxrelay does not answer: nothing to say
        reply = importlib.import_module(handler.module).handle(payload)
        wire = None if reply is None else host.encode(handler.event, name, reply)
        if wire:
            out.write(json.dumps(wire))
    except Exception as exc:  # fail open: never let an error reach the host
        _fail(f"ctxrelay {host.name} hook", exc)
    return 0


def _fail(name: str, exc: Exception) -> None:
    sys.stderr.write(f"{name}: ignored ({type(exc).__name__}: {str(exc)[:200]})\n")
