"""The plugin against the real Claude Code CLI (the one bundled by ``claude-agent-sdk``)
talking to the project's scripted Anthropic-compatible server over real HTTP.

The plugin is installed into a temp project with ``ctxrelay claude install`` (and, in
one test, through ``claude plugin marketplace add`` + ``claude plugin install``), with a
temp ``HOME``. Subagents run in the background in this CLI version, so the server
routes every request by its content (a marker in the conversation's first user
message, and how many assistant turns it already holds), never by arrival order.
What the tests assert is what the model was actually sent.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget.bounds import (
    AGENT_MAX_TURNS,
    HAIKU_CONTEXT_MAX,
    READ_MAX_BYTES,
    TURNS_LEFT_AT,
)
from ctxrelay.claude._snippet import plugin_dir
from ctxrelay.claude.hook import HANDLERS
from ctxrelay.cli.claude import main as install_main
from ctxrelay.testing import AnthropicServer, Step, ToolUse
from tests.conftest import claude_cli
from tests.e2e._usage import usage

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PROJECT_ROOT = Path(__file__).resolve().parents[2]
NOTE = "[ctxrelay] Report now"
NOTICE = "[ctxrelay] Subagent"


# -- routing by content ---------------------------------------------------------------


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            inner = block.get("content")
            parts.append(inner if isinstance(inner, str) else json.dumps(inner))
    return "\n".join(parts)


def marker_of(body: Mapping[str, Any]) -> tuple[str | None, int]:
    """The conversation a request belongs to (the ``TASK-…`` marker of its first user
    message) and how many assistant turns it already holds."""
    messages = body.get("messages") or []
    first = _text(messages[0].get("content")) if messages else ""
    found = re.search(r"\bTASK-[A-Z]+\b", first)
    turns = sum(1 for m in messages if m.get("role") == "assistant")
    return (found.group(0) if found else None), turns


def bash(command: str, context: int = 20_000) -> Step:
    return Step(
        tool_calls=[ToolUse("Bash", {"command": command, "description": "run"})], **usage(context)
    )


Script = dict[str, Callable[[int], Step]]


@dataclass
class Run:
    proc: subprocess.CompletedProcess[str]
    server: AnthropicServer
    home: Path
    project: Path

    def conversation(self, marker: str) -> list[dict[str, Any]]:
        """The request bodies of one conversation, in turn order."""
        found: dict[int, dict[str, Any]] = {}
        for request in self.server.requests_to("/v1/messages"):
            # An agent's own turns offer it tools; the CLI's side requests (titles,
            # summaries) that may quote a conversation do not.
            if isinstance(request.body, dict) and request.body.get("tools"):
                mark, turns = marker_of(request.body)
                if mark == marker:
                    found.setdefault(turns, request.body)
        return [found[k] for k in sorted(found)]

    def last_user_text(self, body: Mapping[str, Any]) -> str:
        """Everything the request sends after its last assistant turn (the tool results
        and the system reminders Claude Code puts next to them)."""
        messages = body["messages"]
        last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        return json.dumps([m["content"] for m in messages[last + 1 :]])


@pytest.fixture
def claude_env(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    cli_dir = str(Path(sys.executable).parent)  # where ctxrelay-hook is installed
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    env = {
        "PATH": cli_dir + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "ANTHROPIC_API_KEY": "test-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "IS_SANDBOX": "1",
        "CTXRELAY_STATE_DIR": str(tmp_path / "state"),
        "LANG": "C.UTF-8",
    }
    return home, project, env


def run_claude(
    env: dict[str, str],
    project: Path,
    home: Path,
    prompt: str,
    script: Script,
    *,
    extra_args: tuple[str, ...] = (),
    timeout: float = 300,
) -> Run:
    cli = claude_cli()

    def route(body: Mapping[str, Any]) -> Step:
        marker, turns = marker_of(body)
        if marker in script:
            return script[marker](turns)
        return Step(text="ok")  # side requests of the CLI (titles, summaries)

    with AnthropicServer(route) as server:
        proc = subprocess.run(
            [
                str(cli),
                "-p",
                prompt,
                "--permission-mode",
                "bypassPermissions",
                "--output-format",
                "json",
                *extra_args,
            ],
            cwd=project,
            env={**env, "ANTHROPIC_BASE_URL": server.base_url},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    return Run(proc, server, home, project)


def agent_call(marker: str, agent_type: str) -> ToolUse:
    return ToolUse(
        "Agent",
        {
            "description": f"job {marker}",
            "prompt": f"{marker}: do the job",
            "subagent_type": agent_type,
        },
    )


def main_script(*calls: ToolUse) -> Callable[[int], Step]:
    def step(turns: int) -> Step:
        if turns == 0:
            return Step(tool_calls=list(calls), **usage(30_000))
        return Step(text="Main: noted.", **usage(31_000))

    return step


def installed(project: Path) -> None:
    assert install_main(["install", "--project-dir", str(project), "--json"]) == 0


# -- the tests ------------------------------------------------------------------------


def test_report_now_turns_notice_and_guard_against_the_real_cli(
    claude_env: tuple[Path, Path, dict[str, str]],
) -> None:
    home, project, env = claude_env
    installed(project)
    big = project / "big.txt"
    big.write_text("".join(f"{i}\n" for i in range(1, 502)))
    huge = project / "huge.log"
    huge.write_bytes(b"x" * 79 + b"\n")
    with huge.open("ab") as f:
        f.truncate(5 * 1024 * 1024)
    assert huge.stat().st_size > READ_MAX_BYTES

    limit = AGENT_MAX_TURNS["investigator"]
    contexts = [40_000, 99_000, 120_000]

    def context_agent(turns: int) -> Step:
        if turns < len(contexts):
            return bash(f"echo step{turns}", contexts[turns])
        return Step(text="Report: context agent done.", **usage(121_000))

    def turns_agent(turns: int) -> Step:
        return bash(f"echo turn{turns}")  # never reports: it runs into its maxTurns

    def guard_agent(turns: int) -> Step:
        plan = [
            bash("cat big.txt"),
            bash("cat big.txt | wc -l"),
            Step(tool_calls=[ToolUse("Read", {"file_path": str(huge)})], **usage(20_000)),
        ]
        return plan[turns] if turns < len(plan) else Step(text="Report: guard agent done.")

    run = run_claude(
        env,
        project,
        home,
        "TASK-MAIN start three agents",
        {
            "TASK-MAIN": main_script(
                agent_call("TASK-CONTEXT", "general-purpose"),
                agent_call("TASK-TURNS", "investigator"),
                agent_call("TASK-GUARD", "general-purpose"),
            ),
            "TASK-CONTEXT": context_agent,
            "TASK-TURNS": turns_agent,
            "TASK-GUARD": guard_agent,
        },
    )
    assert run.proc.returncode == 0, run.proc.stderr[-2000:]

    # 1. Context: the request after the one that crossed 100,000 carries the note;
    #    no earlier request does.
    ctx = run.conversation("TASK-CONTEXT")
    assert len(ctx) == len(contexts) + 1
    for body in ctx[: len(contexts)]:
        assert NOTE not in json.dumps(body["messages"])
    crossed = run.last_user_text(ctx[len(contexts)])
    assert NOTE in crossed
    assert "120,000 tokens" in crossed
    assert "100,000-token bound" in crossed

    # 2. Turns: the investigator (maxTurns 31) is told when 4 turns are left, not before;
    #    it runs into its limit without a report.
    turns = run.conversation("TASK-TURNS")
    assert len(turns) == limit
    first_noted = next(i for i, body in enumerate(turns) if NOTE in run.last_user_text(body))
    assert first_noted == limit - TURNS_LEFT_AT
    note = run.last_user_text(turns[first_noted])
    assert f"used {limit - TURNS_LEFT_AT} of your {limit} turns ({TURNS_LEFT_AT} left" in note

    # 3. The parent is told which subagent stopped short and where its transcript is.
    main = run.conversation("TASK-MAIN")
    notices = [run.last_user_text(b) for b in main if NOTICE in run.last_user_text(b)]
    assert len(notices) == 1, "told exactly once"
    said = notices[0]
    assert f"(investigator) stopped at its turn limit ({limit} of {limit} turns)" in said
    path = re.search(r"Its transcript is (\S+\.jsonl)", said.replace("\\n", " "))
    assert path is not None
    transcript = Path(path.group(1))
    assert transcript.is_file()
    assert transcript.is_relative_to(home / ".claude" / "projects")
    assert "TASK-TURNS" in transcript.read_text()

    # 4. Guard: `cat big.txt` is denied with the Read call; the pipe runs; 5 MiB Read denied.
    guard = run.conversation("TASK-GUARD")
    assert len(guard) == 4
    denied = run.last_user_text(guard[1])
    assert "ctxrelay guard" in denied
    assert json.dumps(f'Read {{"file_path": "{big}"}}')[1:-1] in denied
    piped = run.last_user_text(guard[2])
    assert "501" in piped
    assert "ctxrelay guard" not in piped
    too_big = run.last_user_text(guard[3])
    assert "ctxrelay guard" in too_big
    assert str(huge) in too_big


@pytest.mark.parametrize(
    "garbage",
    [
        "printf '{not json' | ctxrelay-hook",
        "printf '[1, 2, 3]' | ctxrelay-hook",
        "head -c 3000000 /dev/urandom | ctxrelay-hook",
        """printf '{"hook_event_name": "PostToolUse", "agent_id": "../../x", """
        """"session_id": 7, "transcript_path": "/dev/zero"}' | ctxrelay-hook""",
    ],
    ids=["truncated", "not-an-object", "binary", "hostile-fields"],
)
def test_a_hook_fed_garbage_never_breaks_the_session(
    claude_env: tuple[Path, Path, dict[str, str]], garbage: str
) -> None:
    home, project, env = claude_env
    installed(project)
    settings = project / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    for event in ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"):
        data["hooks"][event].append({"hooks": [{"type": "command", "command": garbage}]})
    settings.write_text(json.dumps(data))

    def main(turns: int) -> Step:
        if turns == 0:
            return bash("echo hello-from-bash > out.txt")
        return Step(text="Main: all done.")

    run = run_claude(env, project, home, "TASK-MAIN write a file", {"TASK-MAIN": main})
    assert run.proc.returncode == 0, run.proc.stderr[-2000:]
    assert json.loads(run.proc.stdout)["result"] == "Main: all done."
    assert (project / "out.txt").read_text() == "hello-from-bash\n"
    convo = run.conversation("TASK-MAIN")
    assert len(convo) == 2
    assert "ctxrelay-hook" not in run.last_user_text(convo[1])


def test_the_marketplace_installs_the_plugin_and_its_agents_run_bounded(
    claude_env: tuple[Path, Path, dict[str, str]],
) -> None:
    home, project, env = claude_env
    cli = str(claude_cli())

    # Without an API key: with one, each plugin command first waits ~18 s on a network
    # check that cannot succeed here.
    plugin_env = {k: v for k, v in env.items() if k != "ANTHROPIC_API_KEY"}

    def claude(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [cli, *args],
            cwd=project,
            env=plugin_env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    for target in (PROJECT_ROOT, plugin_dir()):  # the marketplace, then the plugin
        validated = claude("plugin", "validate", str(target))
        assert validated.returncode == 0, validated.stdout + validated.stderr
    provides = validated.stdout
    for name in AGENT_MAX_TURNS:
        assert f"agents: ctxrelay:{name}" in provides
    for event in HANDLERS:
        assert f"hooks: {event}" in provides
    added = claude("plugin", "marketplace", "add", str(PROJECT_ROOT))
    assert added.returncode == 0, added.stdout + added.stderr
    got = claude("plugin", "install", "ctxrelay@ctxrelay", "--scope", "project")
    assert got.returncode == 0, got.stdout + got.stderr

    limit = AGENT_MAX_TURNS["investigator"]

    def investigator(turns: int) -> Step:
        if turns < limit - TURNS_LEFT_AT:
            return bash(f"echo turn{turns}")
        return Step(text="Report: stopped when told.")

    run = run_claude(
        env,
        project,
        home,
        "TASK-MAIN investigate",
        {
            "TASK-MAIN": main_script(agent_call("TASK-PLUGIN", "ctxrelay:investigator")),
            "TASK-PLUGIN": investigator,
        },
    )
    assert run.proc.returncode == 0, run.proc.stderr[-2000:]
    convo = run.conversation("TASK-PLUGIN")
    assert len(convo) == limit - TURNS_LEFT_AT + 1
    noted = [i for i, body in enumerate(convo) if NOTE in run.last_user_text(body)]
    assert noted == [limit - TURNS_LEFT_AT]
    # The plugin's agent ran with its own system prompt, which states the report rule.
    assert "within 400 words" in json.dumps(convo[0].get("system"))


def test_a_haiku_subagent_is_told_at_the_haiku_bound(
    claude_env: tuple[Path, Path, dict[str, str]],
) -> None:
    home, project, env = claude_env
    installed(project)
    contexts = [80_000, HAIKU_CONTEXT_MAX + 1_000]

    def haiku_agent(turns: int) -> Step:
        if turns < len(contexts):
            return bash(f"echo step{turns}", contexts[turns])
        return Step(text="Report: haiku agent done.")

    call = ToolUse(
        "Agent",
        {
            "description": "job TASK-HAIKU",
            "prompt": "TASK-HAIKU: do the job",
            "subagent_type": "general-purpose",
            "model": "haiku",
        },
    )
    run = run_claude(
        env,
        project,
        home,
        "TASK-MAIN one haiku agent",
        {"TASK-MAIN": main_script(call), "TASK-HAIKU": haiku_agent},
    )
    assert run.proc.returncode == 0, run.proc.stderr[-2000:]
    convo = run.conversation("TASK-HAIKU")
    assert len(convo) == len(contexts) + 1
    assert "haiku" in str(convo[0]["model"]).lower()  # the CLI asked for a Haiku model
    assert NOTE not in json.dumps(convo[1]["messages"])
    note = run.last_user_text(convo[2])
    assert f"{HAIKU_CONTEXT_MAX:,}-token bound" in note
