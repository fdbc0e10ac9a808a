"""Run a hook command as the Gemini CLI runs it, with real payloads, and say whether it
did its job: what install checks before it writes a command, and what doctor checks for
each command it finds installed.

The CLI starts a hook through the shell in the project with one JSON payload on stdin
(:func:`ctxrelay.hooks.install.probe.run_as_host`). The ``BeforeTool`` probe is the
core's probe of a host whose shell is how it reads
(:func:`ctxrelay.hooks.install.probe.check_hook`) with the CLI's payloads and its deny
(``{"decision": "deny"}``); the other events, in a fresh project with no session file,
must answer nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxrelay.hooks.install import probe
from ctxrelay.hooks.install.probe import Check
from ctxrelay.hooks.install.probe import check_every_event as every_event

__all__ = ["PROBE_SESSION", "check_every_event", "check_hook", "denied", "sample_payload"]

PROBE_SESSION = "4a274728-f4ba-4722-8229-a7303754c0de"
"""The session id of the probes' payloads (the CLI's are UUIDs)."""


def sample_payload(event: str, root: Path, command: str = "cat big.txt") -> dict[str, Any]:
    """A payload as the Gemini CLI 0.61.0 sends it for ``event``."""
    payload: dict[str, Any] = {
        "session_id": PROBE_SESSION,
        "transcript_path": str(root / "session-2026-12-03T06-02-4a274728.jsonl"),
        "cwd": str(root),
        "hook_event_name": event,
        "timestamp": "2026-12-03T06:02:50.458Z",
    }
    if event in ("BeforeTool", "AfterTool"):
        payload["tool_name"] = "run_shell_command"
        payload["tool_input"] = {"command": command, "description": "probe"}
    if event == "AfterTool":
        payload["tool_response"] = {"llmContent": "Output: hello", "returnDisplay": "hello"}
    if event in ("BeforeAgent", "AfterAgent"):
        payload["prompt"] = "please read small.txt"
    if event == "AfterAgent":
        payload |= {"prompt_response": "done", "stop_hook_active": False}
    if event == "SessionStart":
        payload["source"] = "startup"
    return payload


def denied(stdout: str) -> bool:
    """Whether a hook's stdout denies the call as the Gemini CLI reads a deny."""
    try:
        answer = json.loads(stdout)
    except ValueError:
        return False
    return isinstance(answer, dict) and answer.get("decision") == "deny"


def check_hook(command: str, event: str = "BeforeTool", *, runs: int = 1) -> Check:
    """Run ``command`` on a real payload of ``event``: for ``BeforeTool`` the guard's
    probe; the other events must answer nothing. ``ms``: the median of ``runs`` runs."""
    return probe.check_hook(
        command,
        event,
        guard_event="BeforeTool",
        sample_payload=sample_payload,
        runs=runs,
        denies=denied,
    )


def check_every_event(command: str, events: list[str]) -> Check:
    """``command`` run on a payload of each of ``events`` (the core's
    :func:`~ctxrelay.hooks.install.probe.check_every_event` with this host's probes)."""
    return every_event(command, events, check_hook, "BeforeTool")
