"""``ctxrelay claude doctor``'s checks: does the hook run, how fast, which Claude Code
(the command: :mod:`ctxrelay.cli.claude.doctor`)."""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ctxrelay.claude._snippet import HOOK_COMMAND
from ctxrelay.claude.binary import cli_path
from ctxrelay.claude.install import load_settings, settings_path
from ctxrelay.errors import ConfigError

__all__ = ["doctor"]


def _timed(
    argv: list[str], stdin: str, runs: int
) -> tuple[float, subprocess.CompletedProcess[str]]:
    times: list[float] = []
    proc: subprocess.CompletedProcess[str] | None = None
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(
            argv, input=stdin, capture_output=True, text=True, timeout=30, check=False
        )
        times.append(time.perf_counter() - start)
    assert proc is not None
    return statistics.median(times), proc


def doctor(project: Path, home: Path, runs: int = 5) -> dict[str, Any]:
    """What a user needs to know: does the hook run, how fast, which Claude Code."""
    checks: dict[str, Any] = {}
    hook = shutil.which(HOOK_COMMAND)
    checks["hook_command"] = hook
    problems: list[str] = []
    if hook is None:
        problems.append(f"{HOOK_COMMAND} is not on PATH; Claude Code cannot run the hooks")
    else:
        payload = json.dumps(
            {
                "session_id": "ctxrelay-doctor",
                "transcript_path": str(home / ".claude" / "projects" / "none" / "x.jsonl"),
                "hook_event_name": "PostToolUse",
                "agent_id": "doctor",
                "agent_type": "ctxrelay:investigator",
                "tool_name": "Bash",
                "tool_input": {"command": "true"},
                "tool_response": {},
            }
        )
        hook_s, proc = _timed([hook], payload, runs)
        base_s, _ = _timed([sys.executable, "-c", "pass"], "", runs)
        garbage_s, bad = _timed([hook], "{not json", 1)
        del garbage_s
        checks["hook_exit"] = proc.returncode
        checks["hook_ms"] = round(hook_s * 1000, 1)
        checks["python_ms"] = round(base_s * 1000, 1)
        checks["hook_ratio"] = round(hook_s / base_s, 2) if base_s else None
        checks["fails_open"] = bad.returncode == 0 and bad.stdout == ""
        if proc.returncode != 0:
            problems.append(f"the hook exited {proc.returncode}: {proc.stderr.strip()[:200]}")
        if not checks["fails_open"]:
            problems.append("the hook does not fail open on malformed input")
    found = cli_path()
    cli = None if found is None else str(found)
    checks["claude_cli"] = cli
    version = None
    if cli is not None:
        try:
            out = subprocess.run(
                [cli, "--version"], capture_output=True, text=True, timeout=30, check=False
            )
            version = out.stdout.strip().split(" ")[0] or None
        except (OSError, subprocess.SubprocessError):
            version = None
    checks["claude_version"] = version
    if version is None:
        problems.append("no Claude Code CLI found (claude on PATH or claude-agent-sdk)")
    installed = {}
    for scope in ("project", "user"):
        path = settings_path(scope, project, home)
        try:
            current = load_settings(path)
        except ConfigError as exc:
            problems.append(str(exc))
            continue
        hooks = current.get("hooks")
        ours = json.dumps(hooks).count(f'"{HOOK_COMMAND}"') if isinstance(hooks, dict) else 0
        installed[scope] = {"settings": str(path), "hooks": ours}
    checks["installed"] = installed
    if not any(v["hooks"] for v in installed.values()):
        problems.append("the hooks are in neither settings file (or come from the plugin)")
    checks["problems"] = problems
    checks["ok"] = not [p for p in problems if not p.startswith("the hooks are in neither")]
    return checks
