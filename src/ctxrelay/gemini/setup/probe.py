"""Run a hook command as the Gemini CLI runs it, with real payloads, and say whether it
did its job: what install checks before it writes a command, and what doctor checks for
each command it finds installed.

The CLI starts a hook through the shell in the project with one JSON payload on stdin
(:func:`ctxrelay.hooks.install.probe.run_as_host`). The ``BeforeTool`` probe is the
core's guard probe with the CLI's payloads, its deny (``{"decision": "deny"}``), a file
over the Gemini print bound, and a small file that must pass; the other events, in a
fresh project with no session file, must answer nothing.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from ctxrelay.budget.bounds import PRINT_BIG_BYTES
from ctxrelay.hooks.install.probe import (
    Check,
    check_guard,
    check_quiet,
    scratch,
    state_env,
)
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
    kind = f"{event} hook"
    if event != "BeforeTool":
        with tempfile.TemporaryDirectory(prefix="ctxrelay-gemini-probe-") as tmp:
            root = Path(tmp)
            payload = json.dumps(sample_payload(event, root))
            return check_quiet(
                command, payload, cwd=root, env=state_env(root), kind=kind, runs=runs
            )
    big = "".join(f"line {i:05d}\n" for i in range(2 * PRINT_BIG_BYTES // 10))
    with scratch(big) as root:
        (root / "small.txt").write_text("hello\n")
        return check_guard(
            command,
            lambda shell: json.dumps(sample_payload(event, root, shell)),
            cwd=root,
            env=state_env(root),
            kind=kind,
            runs=runs,
            allowed="cat small.txt",
            quiet=True,
            denies=denied,
        )


def check_every_event(command: str, events: list[str]) -> Check:
    """``command`` run on a payload of each of ``events`` (the core's
    :func:`~ctxrelay.hooks.install.probe.check_every_event` with this host's probes)."""
    return every_event(command, events, check_hook, "BeforeTool")
