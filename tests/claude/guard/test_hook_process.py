"""``ctxrelay-hook`` as Claude Code runs it: a real process per PreToolUse payload.

Answers for real payload shapes, and the fail-open contract under thousands of malformed
payloads: exit 0, nothing on stdout, exactly one line on stderr. The bulk of the fuzz
runs the hook's ``main`` in-process; a sample of the same payloads runs as processes.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget.bounds import BASH_MAX_OUTPUT_LENGTH, PRINT_PAGE_BYTES
from ctxrelay.claude import hook
from tests.claude.guard._payloads import bash, pre_tool_use, read, response_line

HOOK = Path(sys.executable).with_name("ctxrelay-hook")


def run_hook(
    stdin: bytes, cwd: Path | None = None, cap: int | None = None
) -> subprocess.CompletedProcess[bytes]:
    """The hook as Claude Code runs it; ``cap`` is the ``BASH_MAX_OUTPUT_LENGTH`` the
    settings' ``env`` gives it (``None``: not set, Claude Code's default)."""
    if not HOOK.exists():
        pytest.fail(f"the ctxrelay-hook script is not installed next to {sys.executable}")
    env = {k: v for k, v in os.environ.items() if k != "BASH_MAX_OUTPUT_LENGTH"}
    if cap is not None:
        env["BASH_MAX_OUTPUT_LENGTH"] = str(cap)
    return subprocess.run(
        [str(HOOK)], input=stdin, capture_output=True, cwd=cwd, env=env, timeout=60, check=False
    )


def answer(payload: dict[str, Any], cwd: Path, cap: int | None = None) -> dict[str, Any] | None:
    done = run_hook(json.dumps(payload).encode(), cwd, cap)
    assert done.returncode == 0
    assert done.stderr == b"", done.stderr
    if not done.stdout:
        return None
    parsed = json.loads(done.stdout)
    assert isinstance(parsed, dict)
    return parsed


def reason_of(payload: dict[str, Any], cwd: Path, cap: int | None = None) -> str | None:
    out = answer(payload, cwd, cap)
    if out is None:
        return None
    spec = out["hookSpecificOutput"]
    assert spec["hookEventName"] == "PreToolUse"
    assert spec["permissionDecision"] == "deny"
    return str(spec["permissionDecisionReason"])


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """A project with files of realistic sizes."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("import os\n" + "x = compute(1, 2)\n" * 280)  # 5 KB
    (tmp_path / "notes.md").write_text("".join(f"- note {i:05d}: some text\n" for i in range(800)))
    (tmp_path / "big.log").write_text(
        "".join(f"2026-12-01 10:00:{i % 60:02d} INFO req {i} ok\n" for i in range(20_000))
    )
    (tmp_path / "bundle.min.js").write_text("var a=1;" * 12_500)  # one 100 KB line
    (tmp_path / "big.json").write_text('{"rows": [' + ",".join(["12345"] * 20_000) + "]}\n")
    return tmp_path


INSTALLED_CAP = BASH_MAX_OUTPUT_LENGTH


@pytest.mark.parametrize(
    "command",
    [
        "cat notes.md",  # 24 KB: Claude Code keeps a 2 KB preview and a file
        "cat big.log",
        "tail -n 5000 big.log",
        "sed -n '1,5p' big.json",
        "head -n 1 bundle.min.js",
        "head -50 big.log",
        "cat src/app.py",
    ],
)
def test_under_the_installed_cap_no_print_is_denied(files: Path, command: str) -> None:
    assert reason_of(bash(command, str(files)), files, cap=INSTALLED_CAP) is None


@pytest.mark.parametrize("cap", [None, 150_000])
@pytest.mark.parametrize("command", ["head -50 big.log", "cat src/app.py", "head -c 4000 big.log"])
def test_a_small_bounded_read_is_never_denied(files: Path, command: str, cap: int | None) -> None:
    assert reason_of(bash(command, str(files)), files, cap=cap) is None


def test_a_print_the_host_would_hand_over_whole_and_big_gets_a_page(files: Path) -> None:
    reason = reason_of(bash("cat notes.md", str(files)), files)  # 24 KB, under 30,000
    assert reason is not None
    assert "up to 30,000 characters whole" in reason
    (call,) = re.findall(r"Read (\{.*?\})", reason)
    tool_input = json.loads(call)
    assert tool_input["file_path"] == str(files / "notes.md")
    assert 0 < tool_input["limit"] * 30 <= PRINT_PAGE_BYTES  # 23-byte lines and a prefix
    assert len(reason.encode()) < 600


def test_a_print_over_the_cap_is_left_to_claude_codes_preview(files: Path) -> None:
    assert reason_of(bash("cat big.log", str(files)), files) is None  # 700 KB > 30,000


@pytest.mark.parametrize(
    ("command", "page"),
    [
        ("head -n 1 bundle.min.js", f"Bash head -c {PRINT_PAGE_BYTES} "),
        ("sed -n '1,5p' big.json", f"Bash head -c {PRINT_PAGE_BYTES} "),
    ],
)
def test_bytes_are_counted_not_lines(files: Path, command: str, page: str) -> None:
    reason = reason_of(bash(command, str(files)), files, cap=150_000)
    assert reason is not None
    assert page in reason


@pytest.mark.parametrize(
    "command",
    [
        "nl notes.md",
        "awk '{print}' notes.md",
        "python3 -c 'print(open(\"notes.md\").read())'",
        "tac notes.md",
        "sed '' notes.md",
        "cat notes.md | tee copy.md",
        "bash -c 'cat notes.md'",
        'sh -c "cd src && cd .. && nl notes.md"',
    ],
)
def test_the_common_whole_file_prints_are_recognised(files: Path, command: str) -> None:
    reason = reason_of(bash(command, str(files)), files)
    assert reason is not None, command
    assert str(files / "notes.md") in reason


def test_jq_dot_is_a_whole_file_print(files: Path) -> None:
    (files / "small.json").write_text('{"rows": [' + ",".join(["1"] * 6000) + "]}")
    reason = reason_of(bash("jq . small.json", str(files)), files)  # 12 KB, pretty: more
    assert reason is not None
    assert reason_of(bash("jq .rows[0] small.json", str(files)), files) is None


@pytest.mark.parametrize(
    "command",
    ["cat notes.md | wc -l", "cat notes.md | head -3", "ls -la", "cat > f <<'EOF'\nx\nEOF\n"],
)
def test_allowed_commands_get_no_answer(files: Path, command: str) -> None:
    assert answer(bash(command, str(files)), files) is None


# -- the Read guard: the room below the usable limit ---------------------------------------


def _main_read(tmp_path: Path, file: Path, context: int, **bounds: Any) -> dict[str, Any]:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(response_line("toolu_read", context))
    payload = read(str(file), str(tmp_path), **bounds)
    del payload["agent_id"], payload["agent_type"]
    payload["transcript_path"] = str(transcript)
    payload["tool_use_id"] = "toolu_read"
    return payload


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))


@pytest.mark.usefixtures("state")
@pytest.mark.parametrize("bounds", [{}, {"allow_large": True}, {"offset": 1, "limit": 10**7}])
def test_a_read_over_the_room_is_denied_allow_large_included(
    tmp_path: Path, bounds: dict[str, Any]
) -> None:
    big = tmp_path / "dump.sql"
    big.write_text("INSERT INTO t VALUES (1, 'some row text here');\n" * 22_000)  # 1 MB
    reason = reason_of(_main_read(tmp_path, big, 20_000, **bounds), tmp_path)
    assert reason is not None
    assert "tokens are left below the usable limit" in reason
    (call,) = re.findall(r"Read (\{.*?\})", reason)
    page = json.loads(call)
    assert page.pop("file_path") == str(big)
    assert 0 < page["limit"] <= 16 * PRINT_PAGE_BYTES // 40  # a bounded page
    assert reason_of(_main_read(tmp_path, big, 20_000, **page), tmp_path) is None


@pytest.mark.usefixtures("state")
def test_the_room_shrinks_as_the_context_grows(tmp_path: Path) -> None:
    mid = tmp_path / "mid.log"
    mid.write_text(("x" * 99 + "\n") * 1_500)  # 150 KB, ~50,000 tokens
    assert reason_of(_main_read(tmp_path, mid, 20_000), tmp_path) is None
    assert reason_of(_main_read(tmp_path, mid, 100_000), tmp_path) is not None


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
