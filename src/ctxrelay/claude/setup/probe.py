"""Run a command the way Claude Code runs it, with a real payload, and say whether it
did its job: what install checks before it writes a command, and what ``doctor`` checks
for each command it finds installed.

Claude Code starts a hook, the statusline and a skill's ``!`` line through the shell
(``sh -c COMMAND``) in the project directory, with the JSON payload on stdin, as every
host does (:func:`ctxrelay.hooks.install.probe.run_as_host`). The hook's probe is the
core's guard probe (:func:`ctxrelay.hooks.install.probe.check_guard`: ``cat big.txt``
and a command only the shell parser judges must both come back denied) with Claude
Code's ``PreToolUse`` payload; what is Claude Code's own here is that payload, its
transcript, and the statusline's and the handoff skill's probes.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ctxrelay.budget.bounds import CLAUDE_CODE_BASH_OUTPUT_DEFAULT, DEFAULT_CONTEXT_WINDOW
from ctxrelay.hooks.install.probe import (
    Check,
    check_guard,
    last_line,
    run_as_host,
    scratch,
    state_env,
)

__all__ = ["BIG_FILE_LINES", "check_hook", "check_skill", "check_statusline"]

BIG_FILE_LINES = 2_000
"""The probe's file that ``cat`` must not print into the context (about 19 KB: over the
guard's bound, under Claude Code's default cap)."""


def _scratch_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in state_env(root).items() if k != "CLAUDE_PLUGIN_ROOT"}
    env["CLAUDE_PROJECT_DIR"] = str(root)
    # The guard denies only what Claude Code would hand the model whole: judged under its
    # default cap, whatever the cap of the session the probe runs from.
    env["BASH_MAX_OUTPUT_LENGTH"] = str(CLAUDE_CODE_BASH_OUTPUT_DEFAULT)
    return env


def _call_response(call: str) -> str:
    """A main-session response whose ``tool_use`` block is ``call``: what the transcript
    holds when Claude Code has written the response that made the call (the hook then
    reads it at once and waits for nothing, as in ``bench/hooks.py``)."""
    record = {
        "type": "assistant",
        "sessionId": "ctxrelay-probe",
        "message": {
            "id": "msg_ctxrelay_probe",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": call, "name": "Bash", "input": {}}],
            "stop_reason": "tool_use",
            "usage": {
                "input_tokens": 5,
                "cache_creation_input_tokens": 100,
                "cache_read_input_tokens": 9_000,
                "output_tokens": 10,
            },
        },
    }
    return json.dumps(record) + "\n"


def _pre_tool_use(root: Path, command: str) -> str:
    return json.dumps(
        {
            "session_id": "ctxrelay-probe",
            "transcript_path": str(root / "transcript.jsonl"),
            "cwd": str(root),
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command, "description": "show the file"},
            "tool_use_id": "toolu_probe",
        }
    )


def check_hook(command: str, *, runs: int = 5, env: Mapping[str, str] | None = None) -> Check:
    """The guard's probe with Claude Code's ``PreToolUse`` payloads: ``cat`` of a big
    file and the command only the parser judges must come back denied, malformed input
    must fail open. The payload's transcript holds the response that made the call, so
    the hook has nothing to wait for; ``ms`` is the median of ``runs`` runs; ``env``
    adds variables (a plugin's hooks get ``CLAUDE_PLUGIN_ROOT``)."""
    big = "".join(f"line {i}\n" for i in range(BIG_FILE_LINES))
    with scratch(big) as root:
        (root / "transcript.jsonl").write_text(_call_response("toolu_probe"))
        return check_guard(
            command,
            lambda bash: _pre_tool_use(root, bash),
            cwd=root,
            env={**_scratch_env(root), **(env or {})},
            runs=runs,
        )


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def check_statusline(command: str) -> Check:
    """Send ``command`` a statusline payload: it must print one line that counts."""
    with tempfile.TemporaryDirectory(prefix="ctxrelay-probe-") as tmp:
        root = Path(tmp)
        payload = json.dumps(
            {
                "session_id": "ctxrelay-probe",
                "model": {"id": "claude-sonnet-4-5"},
                "workspace": {"project_dir": str(root)},
                "context_window": {
                    "context_window_size": DEFAULT_CONTEXT_WINDOW,
                    "current_usage": {"input_tokens": 50_000},
                },
            }
        )
        ran = run_as_host(command, payload, cwd=root, env=_scratch_env(root))
    line = ran.stdout.strip()
    if ran.returncode != 0 or not line.lstrip("\x1b[0123456789m").startswith("ctx "):
        why = last_line(ran.stderr) or last_line(ran.stdout, "nothing")
        return Check("statusline", command, False, f"it printed no statusline ({why})")
    return Check("statusline", command, True, "it prints the context line", _ms(ran.seconds))


def check_skill(command: str) -> Check:
    """Run the handoff skill's ``!`` command: it must print an absolute ``.md`` path
    under the project's ``.ctxrelay/handoff/``."""
    with tempfile.TemporaryDirectory(prefix="ctxrelay-probe-") as tmp:
        root = Path(tmp).resolve()
        ran = run_as_host(command, "", cwd=root, env=_scratch_env(root))
        path = Path(ran.stdout.strip() or ".")
        ok = (
            ran.returncode == 0
            and path.is_absolute()
            and path.suffix == ".md"
            and path.parent == root / ".ctxrelay" / "handoff"
        )
    if not ok:
        why = last_line(ran.stderr) or last_line(ran.stdout, "nothing")
        return Check("skill", command, False, f"it printed no handoff path ({why})")
    return Check("skill", command, True, "it reserves a handoff path", _ms(ran.seconds))
