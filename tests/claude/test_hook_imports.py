"""No hook path imports a heavy package.

A hook runs as a fresh process at every tool call (``bench/hooks.py`` measures the time,
``docs/claude-code.md``). Each case runs ``ctxrelay.claude.hook`` in a fresh interpreter
on a real payload, checks its answer, and lists the modules it imported beyond what the
interpreter had at start. The standard library is not on the list: only the SDKs, rich,
the store drivers, tree-sitter (where the command needs no parser) and the parts of
ctxrelay a hook never runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SESSION = "5e55a0b1-7c1d-4e2f-9a3b-1d2c3b4a5f60"
AGENT = "a1b2c3d4e5f60718"

# Never on any hook path, with their submodules.
NEVER_PACKAGES = (
    "rich",
    "sqlite3",
    "asyncio",
    "anthropic",
    "openai",
    "psycopg",
    "claude_agent_sdk",
    "ctxrelay.store",
    "ctxrelay.runtime",
    "ctxrelay.analyze",
    "ctxrelay.cli",
    # Install time only: the core's install machinery and the host's setup/.
    "ctxrelay.hooks.install",
    "ctxrelay.claude.setup",
)
# Nor, for a command that needs no parser, the parser.
PARSER = ("tree_sitter", "tree_sitter_bash")

_PROBE = """
import io, sys
before = set(sys.modules)
from ctxrelay.claude import hook
out = io.StringIO()
hook.main(io.StringIO(sys.argv[1]), out)
sys.stdout.write(out.getvalue() + "\\n" + "\\n".join(sorted(set(sys.modules) - before)))
"""


def run_hook(payload: dict[str, Any], state: Path) -> tuple[str, set[str]]:
    """The hook's answer and the modules it imported, from a fresh interpreter."""
    env = {"CTXRELAY_STATE_DIR": str(state), "HOME": str(state), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(payload)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    assert done.stderr == "", done.stderr  # the hook failed open: the case proves nothing
    answer, _, modules = done.stdout.partition("\n")
    return answer, set(modules.splitlines())


@pytest.fixture
def base(tmp_path: Path) -> dict[str, Any]:
    """A session's payload fields, with a main transcript at 20,000 tokens."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "big.txt").write_text("".join(f"line {i:05d} of the file\n" for i in range(500)))
    transcripts = tmp_path / "projects" / "-project"
    transcripts.mkdir(parents=True)
    main = transcripts / f"{SESSION}.jsonl"
    main.write_text(json.dumps(_response(20_000, sidechain=False)) + "\n")
    session = {"session_id": SESSION, "transcript_path": str(main), "cwd": str(project)}
    # As in a real session: SessionStart ran first (it caches the usable limit).
    start = {**session, "hook_event_name": "SessionStart", "source": "startup"}
    assert run_hook(start, tmp_path / "state")[0] == ""
    return session


def _response(context: int, *, sidechain: bool) -> dict[str, Any]:
    usage = {"input_tokens": 5, "cache_creation_input_tokens": 0}
    usage["cache_read_input_tokens"] = context - 5
    message = {"id": f"msg_{context}", "model": "claude-opus-4-8", "usage": usage}
    record = {"isSidechain": sidechain, "type": "assistant", "message": message}
    return record | ({"agentId": AGENT} if sidechain else {})


def _tool(
    base: dict[str, Any], event: str, tool: str, tool_input: dict[str, Any]
) -> dict[str, Any]:
    return {**base, "hook_event_name": event, "tool_name": tool, "tool_input": tool_input}


def _assert_absent(modules: set[str], packages: tuple[str, ...] = NEVER_PACKAGES) -> None:
    loaded = sorted(
        m for m in modules if m in packages or m.startswith(tuple(p + "." for p in packages))
    )
    assert not loaded, f"the hook imported {loaded}"


def test_a_bash_command_that_prints_no_file(base: dict[str, Any], tmp_path: Path) -> None:
    payload = _tool(base, "PreToolUse", "Bash", {"command": "git status && ls -la src"})
    answer, modules = run_hook(payload, tmp_path / "state")
    assert answer == ""
    _assert_absent(modules, NEVER_PACKAGES + PARSER)
    assert "ctxrelay.claude.guard.bash" in modules  # the guard did look at it


def test_a_plain_bash_command_that_prints_a_file(base: dict[str, Any], tmp_path: Path) -> None:
    payload = _tool(base, "PreToolUse", "Bash", {"command": "cat big.txt"})
    answer, modules = run_hook(payload, tmp_path / "state")
    assert json.loads(answer)["hookSpecificOutput"]["permissionDecision"] == "deny"
    _assert_absent(modules, NEVER_PACKAGES + PARSER)  # a plain command needs no parser
    assert "ctxrelay.hooks.guard._plain" in modules


def test_a_bash_command_that_needs_the_parser(base: dict[str, Any], tmp_path: Path) -> None:
    payload = _tool(base, "PreToolUse", "Bash", {"command": 'cd sub && cat "../big.txt"'})
    answer, modules = run_hook(payload, tmp_path / "state")
    assert json.loads(answer)["hookSpecificOutput"]["permissionDecision"] == "deny"
    _assert_absent(modules)
    assert {"tree_sitter", "tree_sitter_bash"} <= modules  # the public packages


def test_a_read(base: dict[str, Any], tmp_path: Path) -> None:
    payload = _tool(base, "PreToolUse", "Read", {"file_path": "big.txt"})
    answer, modules = run_hook(payload, tmp_path / "state")
    assert answer == ""
    _assert_absent(modules, NEVER_PACKAGES + PARSER)
    assert "ctxrelay.claude.guard.read" in modules


def test_a_subagent_tool_call_over_its_bound(base: dict[str, Any], tmp_path: Path) -> None:
    folder = Path(base["transcript_path"]).with_suffix("") / "subagents"
    folder.mkdir(parents=True)
    usage = {
        "input_tokens": 5,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 150_000,
    }
    line = {
        "isSidechain": True,
        "agentId": AGENT,
        "type": "assistant",
        "message": {"id": "msg_1", "model": "claude-opus-4-8", "usage": usage, "content": []},
    }
    (folder / f"agent-{AGENT}.jsonl").write_text(json.dumps(line) + "\n")
    payload = _tool(base, "PostToolUse", "Bash", {"command": "ls"})
    payload.update(agent_id=AGENT, agent_type="ctxrelay:implementer", tool_response={})
    answer, modules = run_hook(payload, tmp_path / "state")
    assert "Report now" in json.loads(answer)["hookSpecificOutput"]["additionalContext"]
    _assert_absent(modules, NEVER_PACKAGES + PARSER)
    assert "ctxrelay.claude._agents" in modules


@pytest.mark.parametrize(
    ("event", "extra"),
    [
        ("PostToolUse", {"tool_name": "Read", "tool_input": {"file_path": "x"}}),
        ("UserPromptSubmit", {"prompt": "go on"}),
    ],
)
def test_an_ordinary_main_thread_call(
    base: dict[str, Any], tmp_path: Path, event: str, extra: dict[str, Any]
) -> None:
    answer, modules = run_hook({**base, "hook_event_name": event, **extra}, tmp_path / "state")
    assert answer == ""
    _assert_absent(modules, NEVER_PACKAGES + PARSER)


@pytest.mark.parametrize(
    ("event", "extra"),
    [("Stop", {"stop_hook_active": False}), ("SessionStart", {"source": "startup"})],
)
def test_once_per_turn_or_session(
    base: dict[str, Any], tmp_path: Path, event: str, extra: dict[str, Any]
) -> None:
    answer, modules = run_hook({**base, "hook_event_name": event, **extra}, tmp_path / "state")
    assert answer == ""
    _assert_absent(modules, NEVER_PACKAGES + PARSER)
    assert f"ctxrelay.claude._events.{event.lower().replace('start', '_start')}" in modules


def test_a_second_session_started_in_the_same_place(base: dict[str, Any], tmp_path: Path) -> None:
    # A second session started in the same directory gets the same usable limit and mode
    # as the first.
    other = "6f66b1c2-8d2e-4f3a-8b4c-2e3d4c5b6a71"
    start = {**base, "session_id": other, "hook_event_name": "SessionStart", "source": "startup"}
    answer, modules = run_hook(start, tmp_path / "state")
    assert answer == ""
    _assert_absent(modules, NEVER_PACKAGES + PARSER)
    seeded = json.loads((tmp_path / "state" / "claude" / "sessions" / f"{other}.json").read_text())
    first = json.loads((tmp_path / "state" / "claude" / "sessions" / f"{SESSION}.json").read_text())
    assert seeded["usable_limit"] == first["usable_limit"] > 0
    assert seeded["mode"] == first["mode"]
