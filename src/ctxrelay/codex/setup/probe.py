"""Run a hook command as Codex runs it, with real payloads, and say whether it did its
job: what install checks before it writes a command, and what doctor checks for each
command it finds installed. A failing hook is skipped silently by Codex, so this is the
only way to see one fail.

Codex starts a hook through the shell in the session's directory with one JSON payload
on stdin, as Claude Code does (:func:`ctxrelay.claude.setup.probe.run_as_claude_code`); each
probe runs in a throwaway directory with its own ``CTXRELAY_STATE_DIR``. As on Claude
Code, the ``PreToolUse`` probe sends a command only the guard's shell parser can judge
(:data:`ctxrelay.claude.setup.probe.PARSER_COMMAND`) beside the plain ``cat big.txt``.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
from pathlib import Path
from typing import Any

from ctxrelay.budget.bounds import CODEX_PRINT_MAX_BYTES
from ctxrelay.claude.setup.probe import (
    PARSER_COMMAND,
    PARSER_DIR,
    Check,
    denied,
    no_parser,
    run_as_claude_code,
)

__all__ = ["PROBE_SESSION", "check_hook", "sample_payload"]

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


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1][:200] if lines else "nothing"


def check_hook(command: str, event: str = "PreToolUse", *, runs: int = 1) -> Check:
    """Run ``command`` on a real payload of ``event``: a ``PreToolUse`` for ``cat`` of a
    file over the print bound must come back denied, so must one for
    :data:`~ctxrelay.claude.setup.probe.PARSER_COMMAND` (the same file in a subdirectory), and
    one for a small file allowed; the other events must answer nothing; garbage must exit
    0 with nothing on stdout. ``ms`` is the median of ``runs`` runs of the main payload."""
    kind = f"{event} hook"
    with tempfile.TemporaryDirectory(prefix="ctxrelay-codex-probe-") as tmp:
        root = Path(tmp)
        lines = CODEX_PRINT_MAX_BYTES // 10 + 1
        big = "".join(f"line {i:05d}\n" for i in range(lines))
        (root / "big.txt").write_text(big)
        (root / PARSER_DIR).mkdir()
        (root / PARSER_DIR / "big.txt").write_text(big)
        (root / "small.txt").write_text("hello\n")
        env = dict(os.environ, CTXRELAY_STATE_DIR=str(root / ".state"))
        times: list[float] = []
        for _ in range(max(runs, 1)):
            ran = run_as_claude_code(
                command, json.dumps(sample_payload(event, root)), cwd=root, env=env
            )
            if ran.returncode != 0:
                return Check(
                    kind, command, False, f"it exited {ran.returncode} ({_last_line(ran.stderr)})"
                )
            if ran.stderr.strip():
                return Check(kind, command, False, f"it failed open ({_last_line(ran.stderr)})")
            if event == "PreToolUse" and not denied(ran.stdout):
                return Check(
                    kind,
                    command,
                    False,
                    f"'cat big.txt' was not denied (it answered {_last_line(ran.stdout)})",
                )
            if event != "PreToolUse" and ran.stdout.strip():
                return Check(kind, command, False, f"it answered {_last_line(ran.stdout)}")
            times.append(ran.seconds)
        if event == "PreToolUse":
            parsed = sample_payload(event, root, PARSER_COMMAND)
            ran = run_as_claude_code(command, json.dumps(parsed), cwd=root, env=env)
            if not denied(ran.stdout):
                what = _last_line(ran.stderr) if ran.stderr.strip() else _last_line(ran.stdout)
                if ran.returncode != 0:
                    what = f"exit {ran.returncode}: {what}"
                return Check(kind, command, False, no_parser(command, what))
            small = sample_payload(event, root, "cat small.txt")
            ran = run_as_claude_code(command, json.dumps(small), cwd=root, env=env)
            if ran.returncode != 0 or ran.stdout.strip():
                return Check(kind, command, False, "'cat small.txt' was not allowed")
        garbage = run_as_claude_code(command, "{not json", cwd=root, env=env)
        if garbage.returncode != 0 or garbage.stdout.strip():
            return Check(kind, command, False, "it does not fail open on malformed input")
    ms = round(statistics.median(times) * 1000, 1)
    detail = (
        f"'cat big.txt' and '{PARSER_COMMAND}' came back denied, a small file passed; "
        "bad input is ignored"
        if event == "PreToolUse"
        else "it answers a real payload; bad input is ignored"
    )
    return Check(kind, command, True, detail, ms)
