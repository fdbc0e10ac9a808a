"""An install by the previous version keeps working until ``install`` is run again: its
hook commands (``python -I -S -c 'import sys; sys.path.append("<root>"); from
ctxrelay.<host>.hook import run; run()'``) still start the hooks of this code and get
an answer, for both hosts. (That install replaces them and doctor says so is each host's
test: ``tests/claude/setup``, ``tests/codex/setup``.)"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

import ctxrelay
from ctxrelay.hooks.install.launch import older_layout as is_older_layout
from tests.hooks.install._launchers import older_layout, through_shell

ROOT = str(Path(os.path.abspath(ctxrelay.__file__)).parent.parent)
"""Where the previous version's command appended ctxrelay from (its package root)."""


def _run(
    command: str, payload: Mapping[str, object], cwd: Path
) -> subprocess.CompletedProcess[str]:
    return through_shell(command, payload, cwd, {**os.environ, "CTXRELAY_STATE_DIR": str(cwd)})


@pytest.mark.parametrize("module", ["ctxrelay.claude.hook", "ctxrelay.codex.hook"])
def test_the_previous_versions_hook_command_still_answers(tmp_path: Path, module: str) -> None:
    command = older_layout(module, ROOT)
    assert is_older_layout(command)
    (tmp_path / "big.txt").write_text("".join(f"line {i:05d}\n" for i in range(2_000)))  # 22 KB
    session = {
        "session_id": "01a2331a-0000-7000-8000-00000000c0de",
        "transcript_path": str(tmp_path / "transcript.jsonl"),
        "cwd": str(tmp_path),
    }
    call = {
        **session,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "cat big.txt"},
        "tool_use_id": "toolu_old",
    }
    done = _run(command, call, tmp_path)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert "big.txt" in answer["permissionDecisionReason"]
    # Another event: it runs and fails open, never breaking the session.
    start = _run(
        command, {**session, "hook_event_name": "SessionStart", "source": "startup"}, tmp_path
    )
    assert start.returncode == 0, start.stderr
