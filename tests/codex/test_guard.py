"""The Codex guard, through the hook Codex runs (``ctxrelay.codex.hook``), on real files:
a print the model would get big (counted in bytes, cut as Codex cuts for the payload's
model) is denied with a page in bytes the model can run, pages of it and small files
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

from ctxrelay.budget.bounds import PRINT_BIG_BYTES, PRINT_PAGE_BYTES
from ctxrelay.codex import hook

SESSION = "01a2331a-2f0a-7350-8f86-edf3e917924a"
NEVER_ON_THE_HOOK_PATH = ("rich", "sqlite3", "asyncio", "openai", "anthropic", "ctxrelay.cli")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    root = tmp_path / "repo"
    root.mkdir()
    lines = 3 * PRINT_BIG_BYTES // 11  # 11-byte lines: 24 KB
    (root / "big.txt").write_text("".join(f"line {i:05d}\n" for i in range(lines)))
    (root / "small.txt").write_text("hello\n")
    (root / "app.py").write_text("x = compute(1, 2)\n" * 280)  # 5 KB
    (root / "bundle.min.js").write_text("var a=1;" * 40_000)  # one 320 KB line
    (root / "big.json").write_text('{"rows": [' + ",".join(["12345"] * 50_000) + "]}\n")
    (root / "notes.md").write_text("".join(f"- note {i:05d}: some text\n" for i in range(800)))
    return root


def event(
    name: str, project: Path, command: str, model: str = "gpt-5.5", **more: Any
) -> dict[str, Any]:
    return {
        "hook_event_name": name,
        "session_id": SESSION,
        "turn_id": "01a2331a-2fc8-7000-8000-000000000001",
        "transcript_path": str(project / "rollout.jsonl"),
        "cwd": str(project),
        "model": model,
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


def reason_of(project: Path, command: str, model: str = "gpt-5.5") -> str | None:
    got = answer(event("PreToolUse", project, command, model))
    if got is None:
        return None
    out = got["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    assert out["permissionDecision"] == "deny"
    reason: str = out["permissionDecisionReason"]
    return reason


@pytest.mark.parametrize("model", ["gpt-5.5", "gpt-5", "gpt-5-codex", "gpt-5.1-codex"])
@pytest.mark.parametrize(
    "command",
    [
        "cat big.txt",
        "cat -n big.txt",
        "make && cat big.txt",
        "tail -n +2 big.txt",
        "head -n 1000 big.txt",
        "sed -n '1,1000p' big.txt",
        "sed -n '10,$p' big.txt",
        f"head -c {PRINT_BIG_BYTES + 1} big.txt",
        "sed -n '1,5p' big.json",
        "head -n 1 bundle.min.js",
        "nl notes.md",
        "awk '{print}' notes.md",
        "python3 -c 'print(open(\"notes.md\").read())'",
        "tac notes.md",
        "sed '' notes.md",
        "cat notes.md | tee copy.md",
        "bash -c 'cat notes.md'",
    ],
)
def test_a_big_print_is_denied_with_a_page_in_bytes(
    project: Path, command: str, model: str
) -> None:
    reason = reason_of(project, command, model)
    assert reason is not None
    assert f"Print a page of at most {PRINT_PAGE_BYTES:,} bytes instead: " in reason
    assert "rg -n PATTERN " in reason
    cut = "10,000 bytes" if model != "gpt-5.5" else "10,000 tokens"
    assert f"Codex cuts a longer output to about {cut}" in reason
    # Codex appends ". Command: <cmd>": no period of ours, no copy of the command.
    assert not reason.endswith(".")
    assert command not in reason
    # The advice itself passes the guard.
    page = reason.split("instead: ", 1)[1].split(" (the next page", 1)[0].split(";", 1)[0]
    assert reason_of(project, page, model) is None, page


def test_the_page_keeps_the_start_or_the_end(project: Path) -> None:
    big = project / "big.txt"
    assert f"tail -c {PRINT_PAGE_BYTES} {big}" in (reason_of(project, "tail -n 5000 big.txt") or "")
    sed = reason_of(project, "sed -n '100,1500p' big.txt") or ""
    assert f"sed -n '100,1500p' {big} | head -c {PRINT_PAGE_BYTES}" in sed
    head = reason_of(project, "cat big.txt") or ""
    assert f"head -c {PRINT_PAGE_BYTES} {big}" in head
    assert f"tail -c +{PRINT_PAGE_BYTES + 1} {big} | head -c {PRINT_PAGE_BYTES}" in head


@pytest.mark.parametrize(
    "command",
    [
        "cat small.txt",
        "cat app.py",
        "head -n 50 big.txt",
        "tail -n 20 big.txt",
        "sed -n '100,400p' big.txt",
        f"head -c {PRINT_PAGE_BYTES} bundle.min.js",
        "cat big.txt | wc -l",
        "cat big.txt > copy.txt",
        "rg -n line big.txt",
        "cat missing.txt",
        'cat "$F"',
        "echo cat big.txt",
        "jq .rows[0] big.json",
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


def _ran(project: Path, command: str, rollout: str = "rollout.jsonl") -> None:
    """The call ``call_1`` ran ``command``: Codex wrote it to the thread's rollout (as
    0.171 does, compact) and fired PostToolUse."""
    with (project / rollout).open("a") as handle:
        item = {"type": "function_call_output", "call_id": "call_1", "output": "hello"}
        handle.write(json.dumps({"type": "response_item", "payload": item}, separators=(",", ":")))
        handle.write("\n")
    answer(event("PostToolUse", project, command, tool_response="hello\n"))


def test_a_whole_print_that_ran_is_a_repeat_until_the_file_changes(project: Path) -> None:
    assert reason_of(project, "cat small.txt") is None
    # Denied only once the print ran and reached the model (PostToolUse).
    assert reason_of(project, "cat small.txt") is None
    _ran(project, "cat small.txt")
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


def test_a_rewind_forgets_the_prints_it_dropped(project: Path) -> None:
    _ran(project, "cat small.txt")
    assert reason_of(project, "cat small.txt") is not None
    # Codex 0.171 goes on after a rewind to the first prompt (Esc Esc in the TUI) in a
    # new rollout of the same thread that holds no history: the print is not in it.
    (project / "rewound.jsonl").write_text('{"type":"session_meta","payload":{}}\n')
    rewound = event("PreToolUse", project, "cat small.txt")
    rewound["transcript_path"] = str(project / "rewound.jsonl")
    assert answer(rewound) is None


def test_a_compaction_forgets_what_was_printed(project: Path) -> None:
    _ran(project, "cat small.txt")
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
