"""No OpenCode hook path imports a heavy package: each forwarded event's hook runs in a
fresh interpreter on a real payload, and the modules it imported beyond the
interpreter's own at start are checked (as ``tests/claude/test_hook_imports.py`` does
for Claude Code)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxrelay.opencode.host import OPENCODE
from ctxrelay.opencode.setup.probe import sample_payload

NEVER = (
    "rich",
    "sqlite3",
    "asyncio",
    "anthropic",
    "openai",
    "psycopg",
    "msgspec",
    "ctxrelay.store",
    "ctxrelay.runtime",
    "ctxrelay.analyze",
    "ctxrelay.cli",
    "ctxrelay.hooks.install",
    "ctxrelay.opencode.setup",
    "ctxrelay.claude",
    "ctxrelay.codex",
    "ctxrelay.gemini",
    "tree_sitter",
)

_PROBE = """
import io, sys
before = set(sys.modules)
from ctxrelay.opencode import hook
out = io.StringIO()
hook.main([sys.argv[1]], io.StringIO(sys.argv[2]), out)
sys.stdout.write(out.getvalue() + "\\n" + "\\n".join(sorted(set(sys.modules) - before)))
"""


@pytest.mark.parametrize("event", sorted(OPENCODE.handlers))
def test_a_hook_path_imports_nothing_heavy(tmp_path: Path, event: str) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {i:06d}\n" for i in range(8_000)))
    payload = sample_payload(event, tmp_path)
    env = {
        "CTXRELAY_STATE_DIR": str(tmp_path / "state"),
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, event, json.dumps(payload)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    assert done.stderr == "", done.stderr  # it failed open: the case proves nothing
    answer, _, listed = done.stdout.partition("\n")
    if event == "tool.execute.before":
        assert json.loads(answer)["deny"]
    heavy = [m for m in listed.splitlines() if m.split(".")[0] in NEVER or m.startswith(NEVER)]
    assert heavy == []
