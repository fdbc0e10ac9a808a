"""Run a hook command as Codex runs it, with real payloads, and say whether it did its
job: what install checks before it writes a command, and what doctor checks for each
command it finds installed. A failing hook is skipped silently by Codex, so this is the
only way to see one fail.

Codex starts a hook through the shell in the session's directory with one JSON payload
on stdin, as every host does (:func:`ctxrelay.hooks.install.probe.run_as_host`). The
``PreToolUse`` probe is the core's probe of a host whose shell is how it reads
(:func:`ctxrelay.hooks.install.probe.check_hook`: a file over the print bound, and a
small file that must pass; the other events must answer nothing); what is Codex's own
here is its payload samples.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxrelay.hooks.install import probe
from ctxrelay.hooks.install.probe import Check
from ctxrelay.hooks.install.probe import check_every_event as every_event

__all__ = ["PROBE_SESSION", "check_every_event", "check_hook", "sample_payload"]

PROBE_SESSION = "01a2331a-0000-7000-8000-00000000c0de"
"""The session id of the probes' payloads (a Codex thread id is a UUIDv7)."""


def sample_payload(event: str, root: Path, command: str = "cat big.txt") -> dict[str, Any]:
    """A payload as Codex 0.171.0 sends it for ``event`` on a shell call."""
    payload: dict[str, Any] = {
        "session_id": PROBE_SESSION,
        "turn_id": "01a2331a-0000-7000-8000-00000000c0df",
        "transcript_path": str(root / "rollout.jsonl"),
        "cwd": str(root),
        "hook_event_name": event,
        "model": "gpt-5.5",
        "permission_mode": "bypassPermissions",
    }
    if event in ("PreToolUse", "PostToolUse"):
        payload |= {"tool_name": "Bash", "tool_input": {"command": command}}
        payload["tool_use_id"] = "call_probe"
    if event == "PostToolUse":
        payload["tool_response"] = "hello\n"
    if event == "PostCompact":
        payload["trigger"] = "manual"
    if event == "Stop":
        payload |= {"stop_hook_active": False, "last_assistant_message": "done"}
    if event == "SessionStart":
        payload["source"] = "startup"
    return payload


def check_hook(command: str, event: str = "PreToolUse", *, runs: int = 1) -> Check:
    """Run ``command`` on a real payload of ``event``: for ``PreToolUse``, the guard's
    probe (``cat`` of a file over the print bound and the command only the parser judges
    denied, a small file allowed, garbage failing open); the other events must answer
    nothing. ``ms`` is the median of ``runs`` runs of the main payload."""
    return probe.check_hook(
        command,
        event,
        guard_event="PreToolUse",
        sample_payload=sample_payload,
        runs=runs,
    )


def check_every_event(command: str, events: list[str]) -> Check:
    """``command`` run on a payload of each of ``events`` (the core's
    :func:`~ctxrelay.hooks.install.probe.check_every_event` with this host's probes)."""
    return every_event(command, events, check_hook, "PreToolUse")
