"""``ctxrelay-hook`` as Claude Code runs it: a real process per PreToolUse payload.

Answers for real payload shapes, and the fail-open contract under thousands of malformed
payloads: exit 0, nothing on stdout, exactly one line on stderr. The bulk of the fuzz
runs the hook's ``main`` in-process; a sample of the same payloads runs as processes.
"""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget.bounds import READ_MAX_BYTES
from ctxrelay.claude import hook
from tests.claude.guard._payloads import bash, pre_tool_use, read

HOOK = Path(sys.executable).with_name("ctxrelay-hook")


def run_hook(stdin: bytes, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    if not HOOK.exists():
        pytest.fail(f"the ctxrelay-hook script is not installed next to {sys.executable}")
    return subprocess.run(
        [str(HOOK)], input=stdin, capture_output=True, cwd=cwd, timeout=60, check=False
    )


def answer(payload: dict[str, Any], cwd: Path) -> dict[str, Any] | None:
    done = run_hook(json.dumps(payload).encode(), cwd)
    assert done.returncode == 0
    assert done.stderr == b"", done.stderr
    if not done.stdout:
        return None
    parsed = json.loads(done.stdout)
    assert isinstance(parsed, dict)
    return parsed


def test_cat_of_a_file_is_denied_by_the_hook_process(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"{i}\n" for i in range(1000)))
    out = answer(bash("cat big.txt", str(tmp_path)), tmp_path)
    assert out is not None
    spec = out["hookSpecificOutput"]
    assert spec["hookEventName"] == "PreToolUse"
    assert spec["permissionDecision"] == "deny"
    assert f'Read {{"file_path": "{tmp_path / "big.txt"}"}}' in spec["permissionDecisionReason"]


def test_tail_is_translated_by_the_hook_process(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"{i}\n" for i in range(1000)))
    out = answer(bash("cd / && tail -n 5 " + str(tmp_path / "big.txt"), "/"), tmp_path)
    assert out is not None
    assert '"offset": 996, "limit": 5' in out["hookSpecificOutput"]["permissionDecisionReason"]


@pytest.mark.parametrize(
    "command",
    ["cat big.txt | wc -l", "cat big.txt | head -3", "ls -la", "cat > f <<'EOF'\nx\nEOF\n"],
)
def test_allowed_commands_get_no_answer(tmp_path: Path, command: str) -> None:
    assert answer(bash(command, str(tmp_path)), tmp_path) is None


def test_a_five_mib_read_is_denied_by_the_hook_process(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    with big.open("wb") as handle:
        handle.truncate(5 * 1024 * 1024)
    assert READ_MAX_BYTES < 5 * 1024 * 1024
    out = answer(read(str(big), str(tmp_path)), tmp_path)
    assert out is not None
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert answer(read(str(big), str(tmp_path), limit=20), tmp_path) is None


# -- fail open ----------------------------------------------------------------------------------

_WRONG: list[object] = [None, 0, 1.5, True, "", "x", [], ["cat f"], {}, {"command": 1}]


def malformed(rng: random.Random) -> Iterator[bytes]:
    """Payloads each of which must make the hook say one line on stderr and nothing else."""
    valid = [
        bash("cat big.txt", "/w"),
        bash("ls | head", "/w"),
        read("/w/big.txt", "/w"),
    ]
    while True:
        kind = rng.randrange(6)
        base = json.loads(json.dumps(rng.choice(valid)))
        if kind == 0:  # cut short anywhere
            text = json.dumps(base)
            yield text[: rng.randrange(len(text))].encode()
        elif kind == 1:  # not JSON at all, or not UTF-8
            yield bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))) + b"\xff"
        elif kind == 2:  # JSON that is not an object
            yield json.dumps(rng.choice([None, 1, "PreToolUse", [base], True])).encode()
        elif kind == 3:  # a wrong type where the guard needs a field
            field = rng.choice(["tool_name", "tool_input", "cwd"])
            wrong = {
                "tool_name": [v for v in _WRONG if not isinstance(v, str)],
                "tool_input": [v for v in _WRONG if not isinstance(v, dict)],
                "cwd": [v for v in _WRONG if not isinstance(v, str) or not v],
            }[field]
            base[field] = rng.choice(wrong)
            yield json.dumps(base).encode()
        elif kind == 4:  # the tool's input lacks its key or has the wrong type
            key = "command" if base["tool_name"] == "Bash" else "file_path"
            if rng.random() < 0.5:
                base["tool_input"].pop(key)
            else:
                base["tool_input"][key] = rng.choice([v for v in _WRONG if not isinstance(v, str)])
            yield json.dumps(base).encode()
        else:  # a field missing entirely
            base.pop(rng.choice(["tool_name", "tool_input"]))
            yield json.dumps(base).encode()


def test_thousands_of_malformed_payloads_fail_open_in_process(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rng = random.Random(20261130)
    payloads = malformed(rng)
    for _ in range(3000):
        data = next(payloads)
        text = data.decode("utf-8", "replace")
        out = io.StringIO()
        assert hook.main(io.StringIO(text), out) == 0
        assert out.getvalue() == "", text
        err = capsys.readouterr().err
        assert err.count("\n") == 1, (text, err)
        assert err.endswith("\n")
        assert err.startswith("ctxrelay claude hook: ")


def test_malformed_payloads_fail_open_as_processes() -> None:
    rng = random.Random(7)
    payloads = malformed(rng)
    for _ in range(60):
        data = next(payloads)
        done = run_hook(data)
        assert done.returncode == 0, data
        assert done.stdout == b"", data
        assert done.stderr.count(b"\n") == 1, (data, done.stderr)
        assert b"Traceback" not in done.stderr


@pytest.mark.parametrize(
    "command",
    [
        "cat f; " * 20_000,
        "(" * 20_000 + "cat f" + ")" * 20_000,
        "cat " + "x" * 1_000_000,
        "cat \udcff\ud800",
        "cat {\U000e0041 | head; sed -n 1p {\U00100000",  # crashes a bare tree-sitter-bash
        "\x00" * 1000,
    ],
)
def test_hostile_commands_never_break_the_hook(command: str) -> None:
    payload = json.dumps(bash(command, "/tmp")).encode()
    done = run_hook(payload)
    assert done.returncode == 0
    assert b"Traceback" not in done.stderr
    if done.stdout:
        assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_other_events_and_tools_are_silent(tmp_path: Path) -> None:
    agent = pre_tool_use("Agent", {"prompt": "cat big.txt"}, str(tmp_path))
    assert answer(agent, tmp_path) is None
