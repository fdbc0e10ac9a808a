"""The Codex guard, through the hook Codex runs (``ctxrelay.codex.hook``), on real files:
big prints are denied with a reason the model can act on, pages of them and small files
pass, and a second whole print of an unchanged file is a repeat until a compaction."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget.bounds import CODEX_PRINT_MAX_BYTES, CODEX_PRINT_MAX_LINES
from ctxrelay.codex import hook

SESSION = "01a2331a-2f0a-7350-8f86-edf3e917924a"
NEVER_ON_THE_HOOK_PATH = ("rich", "sqlite3", "asyncio", "openai", "anthropic", "ctxrelay.cli")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    root = tmp_path / "repo"
    root.mkdir()
    lines = CODEX_PRINT_MAX_BYTES // 10 + 100  # 11-byte lines: over the byte bound
    (root / "big.txt").write_text("".join(f"line {i:05d}\n" for i in range(lines)))
    (root / "small.txt").write_text("hello\n")
    return root


def event(name: str, project: Path, command: str, **more: Any) -> dict[str, Any]:
    return {
        "hook_event_name": name,
        "session_id": SESSION,
        "turn_id": "01a2331a-2fc8-7000-8000-000000000001",
        "transcript_path": str(project / "rollout.jsonl"),
        "cwd": str(project),
        "model": "gpt-5.5",
        "permission_mode": "bypassPermissions",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "call_1",
        **more,
    }


def answer(payload: dict[str, Any]) -> dict[str, Any] | None:
    out = io.StringIO()
    assert hook.main(io.StringIO(json.dumps(payload)), out) == 0
    text = out.getvalue()
    return json.loads(text) if text else None


def reason_of(project: Path, command: str) -> str | None:
    got = answer(event("PreToolUse", project, command))
    if got is None:
        return None
    out = got["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    assert out["permissionDecision"] == "deny"
    reason: str = out["permissionDecisionReason"]
    return reason


@pytest.mark.parametrize(
    "command",
    [
        "cat big.txt",
        "cat -n big.txt",
        "make && cat big.txt",
        "tail -n +2 big.txt",
        f"head -n {CODEX_PRINT_MAX_LINES + 1} big.txt",
        f"sed -n '1,{CODEX_PRINT_MAX_LINES + 1}p' big.txt",
        "sed -n '10,$p' big.txt",
        f"head -c {CODEX_PRINT_MAX_BYTES + 1} big.txt",
    ],
)
def test_a_big_print_is_denied_with_a_page_the_model_can_run(project: Path, command: str) -> None:
    reason = reason_of(project, command)
    assert reason is not None
    big = project / "big.txt"
    assert f"{big} is " in reason
    assert f"sed -n '1,{CODEX_PRINT_MAX_LINES}p' {big}" in reason
    # Codex appends ". Command: <cmd>": no period of ours, no copy of the command.
    assert not reason.endswith(".")
    assert command not in reason
    # The advice itself passes the guard.
    assert reason_of(project, f"sed -n '1,{CODEX_PRINT_MAX_LINES}p' {big}") is None


@pytest.mark.parametrize(
    "command",
    [
        "cat small.txt",
        "head -n 50 big.txt",
        "tail -n 20 big.txt",
        f"sed -n '100,{99 + CODEX_PRINT_MAX_LINES}p' big.txt",
        "cat big.txt | wc -l",
        "cat big.txt > copy.txt",
        "rg -n line big.txt",
        "cat missing.txt",
        'cat "$F"',
        "echo cat big.txt",
    ],
)
def test_pages_small_files_and_output_elsewhere_pass(project: Path, command: str) -> None:
    assert reason_of(project, command) is None


def test_other_tools_and_garbage_fail_open(project: Path) -> None:
    patch = event("PreToolUse", project, "cat big.txt", tool_name="apply_patch")
    assert answer(patch) is None
    bad = event("PreToolUse", project, "cat big.txt", tool_input={"command": 7})
    assert answer(bad) is None
    out = io.StringIO()
    assert hook.main(io.StringIO("not json"), out) == 0
    assert out.getvalue() == ""


def test_a_whole_print_that_ran_is_a_repeat_until_the_file_changes(project: Path) -> None:
    assert reason_of(project, "cat small.txt") is None
    # Denied only once the print ran and reached the model (PostToolUse).
    assert reason_of(project, "cat small.txt") is None
    answer(event("PostToolUse", project, "cat small.txt", tool_response="hello\n"))
    reason = reason_of(project, "cat small.txt")
    assert reason is not None
    assert f"you already printed {project / 'small.txt'} in full" in reason
    assert not reason.endswith(".")
    assert reason_of(project, "head -n 1 small.txt") is None  # a part is fine
    # Another agent (a subagent) has its own context.
    sub = event("PreToolUse", project, "cat small.txt", agent_id="01a23321-3468-7000-8000-0")
    assert answer(sub) is None
    (project / "small.txt").write_text("changed\n")
    assert reason_of(project, "cat small.txt") is None


def test_a_compaction_forgets_what_was_printed(project: Path) -> None:
    answer(event("PostToolUse", project, "cat small.txt", tool_response="hello\n"))
    assert reason_of(project, "cat small.txt") is not None
    compact = {k: v for k, v in event("PostCompact", project, "").items() if "tool" not in k}
    assert answer({**compact, "trigger": "manual"}) is None
    assert reason_of(project, "cat small.txt") is None


_PROBE = """
import io, sys
before = set(sys.modules)
from ctxrelay.codex import hook
out = io.StringIO()
hook.main(io.StringIO(sys.argv[1]), out)
sys.stdout.write(out.getvalue() + "\\n" + "\\n".join(sorted(set(sys.modules) - before)))
"""


def test_the_hook_path_loads_nothing_heavy(project: Path, tmp_path: Path) -> None:
    env = {"CTXRELAY_STATE_DIR": str(tmp_path / "state"), "PATH": os.defpath}
    payload = json.dumps(event("PreToolUse", project, "cat big.txt"))
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, payload], capture_output=True, text=True, env=env, check=True
    )
    assert done.stderr == ""
    first, _, modules = done.stdout.partition("\n")
    assert "deny" in first
    loaded = set(modules.splitlines())
    heavy = {m for m in loaded for p in NEVER_ON_THE_HOOK_PATH if m == p or m.startswith(p + ".")}
    assert heavy == set()
    assert not any(m.startswith("tree_sitter") for m in loaded)  # plain words need no parser
