"""Run the hook command as ctxrelay's OpenCode plugin runs it, with real payloads, and
say whether it did its job: what install checks before it writes the plugin, and what
doctor checks for the command the installed plugin holds.

The plugin starts ``<command> EVENT`` with one JSON payload on stdin (its words, without
a shell; here through the shell, which splits the command the same way:
:func:`ctxrelay.hooks.install.probe.run_as_host`). The ``tool.execute.before`` probe is
the core's guard probe with OpenCode's payloads, its deny (``{"deny": …}``), a file
whose print OpenCode would hand the model big, and a small file that must pass; the
other events, in a fresh project, must answer nothing.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from pathlib import Path
from typing import Any

from ctxrelay.budget.bounds import OPENCODE_OUTPUT_MAX_BYTES
from ctxrelay.hooks.install.probe import Check
from ctxrelay.hooks.install.probe import check_every_event as every_event
from ctxrelay.hooks.install.probe import check_hook as core_check_hook
from ctxrelay.opencode.host import OPENCODE

__all__ = [
    "GUARD_EVENT",
    "PROBE_SESSION",
    "check_every_event",
    "check_hook",
    "denied",
    "sample_payload",
]

PROBE_SESSION = "ses_23c350836001probeCtxrelay0"
"""The session id of the probes' payloads (OpenCode's are ``ses_`` and 26 characters)."""
GUARD_EVENT = "tool.execute.before"
_MODEL = {"provider_id": "local", "model_id": "test-model", "context_limit": 128_000}


def sample_payload(event: str, root: Path, command: str = "cat big.txt") -> dict[str, Any]:
    """A payload as ctxrelay's plugin sends it for ``event`` from OpenCode 1.18.33."""
    payload: dict[str, Any] = {
        "hook_event_name": event,
        "session_id": PROBE_SESSION,
        "directory": str(root),
        "worktree": str(root),
        "ui": "run",
        "model": _MODEL,
    }
    if event.startswith("tool.execute."):
        payload |= {"tool": "bash", "call_id": "call_probe_0"}
        payload["args"] = {"command": command, "description": "probe"}
    if event == "tool.execute.after":
        payload["output_length"] = 6
    if event == "chat.message":
        payload |= {"message_id": "msg_probe", "agent": "build", "prompt": "read small.txt"}
    if event == "session.created":
        payload["title"] = "New session"
    return payload


def command_for(command: str, event: str) -> str:
    """The shell command line of ``command`` run for ``event``, as the plugin runs it."""
    return f"{command} {shlex.quote(event)}"


def denied(stdout: str) -> bool:
    """Whether a hook's stdout denies the call as the plugin reads a deny."""
    try:
        answer = json.loads(stdout)
    except ValueError:
        return False
    return isinstance(answer, dict) and isinstance(answer.get("deny"), str)


def check_hook(command: str, event: str = GUARD_EVENT, *, runs: int = 1) -> Check:
    """Run ``command`` on a real payload of ``event``, as the plugin runs it (the core's
    :func:`~ctxrelay.hooks.install.probe.check_hook`): for ``tool.execute.before`` the
    guard's probe over a file past OpenCode's own cap; the other events must answer
    nothing. ``ms``: the median of ``runs``."""
    check = core_check_hook(
        command_for(command, event),
        event,
        guard_event=GUARD_EVENT,
        sample_payload=sample_payload,
        runs=runs,
        denies=denied,
        big_bytes=OPENCODE_OUTPUT_MAX_BYTES,
    )
    return dataclasses.replace(check, command=command)


def check_every_event(command: str, events: list[str] | None = None) -> Check:
    """``command`` run on a payload of each event the plugin forwards (the core's
    :func:`~ctxrelay.hooks.install.probe.check_every_event` with this host's probes)."""
    names = sorted(OPENCODE.handlers) if events is None else events
    return every_event(command, names, check_hook, GUARD_EVENT)
