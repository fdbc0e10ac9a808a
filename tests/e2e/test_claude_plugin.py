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
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget.bounds import (
    AGENT_MAX_TURNS,
    HAIKU_CONTEXT_MAX,
    SUBAGENT_CONTEXT_MAX,
    TURNS_LEFT_AT,
)
from ctxrelay.claude.host import CLAUDE
from ctxrelay.claude.setup._snippet import plugin_dir
from ctxrelay.cli.claude import main as install_main
from ctxrelay.testing import AnthropicServer, Step, ToolUse
from tests.e2e._claude import PROJECT_ROOT, claude_home, plugin_command, run_cli, texts
from tests.e2e._usage import usage

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

NOTE = "[ctxrelay] Report now"
NOTICE = "[ctxrelay] Subagent"


# -- routing by content ---------------------------------------------------------------


def marker_of(body: Mapping[str, Any]) -> tuple[str | None, int]:
    """The conversation a request belongs to (the ``TASK-…`` marker of its first user
    message) and how many assistant turns it already holds."""
    messages = body.get("messages") or []
    first = "\n".join(texts(messages[0].get("content"))) if messages else ""
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
    return claude_home(tmp_path)  # with this environment's ctxrelay-hook on PATH


def run_routed(
    env: dict[str, str],
    project: Path,
    home: Path,
    prompt: str,
    route: Callable[[Mapping[str, Any]], Step],
    *,
    extra_args: tuple[str, ...] = (),
    timeout: float = 300,
) -> Run:
    """Run the CLI headless on ``prompt`` against a server that answers with ``route``."""
    with AnthropicServer(route) as server:
        proc = run_cli(
            env,
            project,
            server,
            "-p",
            prompt,
            "--permission-mode",
            "bypassPermissions",
            *extra_args,
            timeout=timeout,
        )
    return Run(proc, server, home, project)


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
    def route(body: Mapping[str, Any]) -> Step:
        marker, turns = marker_of(body)
        if marker in script:
            return script[marker](turns)
        return Step(text="ok")  # side requests of the CLI (titles, summaries)

    args = ("--output-format", "json", *extra_args)
    return run_routed(env, project, home, prompt, route, extra_args=args, timeout=timeout)


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
    assert huge.stat().st_size > 4 * 1024 * 1024

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
    assert f"(investigator) reached its turn limit ({limit} of {limit} turns)" in said
    path = re.search(r"Its transcript is (\S+\.jsonl)", said.replace("\\n", " "))
    assert path is not None
    transcript = Path(path.group(1))
    assert transcript.is_file()
    assert transcript.is_relative_to(home / ".claude" / "projects")
    assert "TASK-TURNS" in transcript.read_text()

    # 4. Guard: a small `cat` runs (Claude Code caps it anyway); the pipe runs; a 5 MiB
    # Read, far over the subagent's room, is denied.
    guard = run.conversation("TASK-GUARD")
    assert len(guard) == 4
    small = run.last_user_text(guard[1])
    assert "ctxrelay guard" not in small
    assert "501" in small
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

    def claude(*args: str) -> subprocess.CompletedProcess[str]:
        return plugin_command(env, project, *args)

    for target in (PROJECT_ROOT, plugin_dir()):  # the marketplace, then the plugin
        validated = claude("plugin", "validate", str(target))
        assert validated.returncode == 0, validated.stdout + validated.stderr
    provides = validated.stdout
    for name in AGENT_MAX_TURNS:
        assert f"agents: ctxrelay:{name}" in provides
    for event in CLAUDE.handlers:
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


def test_a_fork_is_bounded_by_the_context_it_adds_after_the_fork(
    claude_env: tuple[Path, Path, dict[str, str]],
) -> None:
    # A fork (subagent_type "fork") inherits its parent's whole context: its own file
    # starts with a fork-context-ref line and a copy of the parent's response. Past the
    # subagent bound from its first call, it is told to report only once the context it
    # added itself passes that bound.
    home, project, env = claude_env
    installed(project)
    parent = 150_000
    contexts = [parent + 400, parent + 800, parent + SUBAGENT_CONTEXT_MAX + 1_000]
    fork_call = ToolUse(
        "Agent",
        {
            "description": "fork TASK-FORK",
            "prompt": "TASK-FORK: list the files",
            "subagent_type": "fork",
            "run_in_background": False,
        },
    )

    def main(turns: int) -> Step:
        if turns == 0:
            return Step(tool_calls=[fork_call], **usage(parent))
        return Step(text="Main: noted.", **usage(parent + 1_000))

    fork_bodies: list[dict[str, Any]] = []

    def route(body: Mapping[str, Any]) -> Step:
        marker, turns = marker_of(body)
        if marker != "TASK-MAIN":
            return Step(text="ok")
        if "<fork-boilerplate>" not in json.dumps(body.get("messages")):
            return main(turns)
        fork_bodies.append(dict(body))
        step = turns - 1  # the parent's response that made the call is the first
        if step < len(contexts):
            return bash(f"echo fork{step}", contexts[step])
        return Step(text="Report: the fork is done.", **usage(contexts[-1] + 200))

    run = run_routed(env, project, home, "TASK-MAIN fork once", route)
    assert run.proc.returncode == 0, run.proc.stderr[-2000:]
    by_turn = {sum(m.get("role") == "assistant" for m in b["messages"]): b for b in fork_bodies}
    assert sorted(by_turn) == [1, 2, 3, 4]
    # After its first and second calls (150,400 and 150,800 tokens, 400 and 800 added):
    # nothing. After the third (101,000 added): report now, at the subagent bound.
    assert NOTE not in run.last_user_text(by_turn[2])
    assert NOTE not in run.last_user_text(by_turn[3])
    note = run.last_user_text(by_turn[4])
    assert NOTE in note
    assert f"{SUBAGENT_CONTEXT_MAX:,}-token bound" in note
    # Its file is as described: the reference line, then the parent's response.
    (agent_file,) = (home / ".claude" / "projects").glob("*/*/subagents/agent-*.jsonl")
    first, second = agent_file.read_text().splitlines()[:2]
    assert json.loads(first)["type"] == "fork-context-ref"
    assert json.loads(second)["message"]["content"][0]["name"] == "Agent"


def test_a_continued_agent_counts_its_turns_from_the_message_that_continued_it(
    claude_env: tuple[Path, Path, dict[str, str]],
) -> None:
    # Claude Code counts maxTurns per run of an agent: SendMessage continues a finished
    # agent with "The coordinator sent a message…" and its count starts again there (the
    # two runs together are past maxTurns, and Claude Code lets the second run finish).
    home, project, env = claude_env
    installed(project)
    kind = "investigator"
    limit = AGENT_MAX_TURNS[kind]
    first_run = limit - TURNS_LEFT_AT - 2  # then a report: one turn short of the note
    second_run = TURNS_LEFT_AT + 2  # past the note if the runs were added up
    agent_ids: list[str] = []
    sub_bodies: list[dict[str, Any]] = []

    def sub(body: Mapping[str, Any]) -> Step:
        sub_bodies.append(dict(body))
        messages = body["messages"]
        more = [
            i for i, m in enumerate(messages) if "TASK-MORE" in "\n".join(texts(m.get("content")))
        ]
        start = more[-1] if more else 0
        done = sum(1 for m in messages[start:] if m.get("role") == "assistant")
        if done < (second_run if more else first_run):
            return bash(f"echo {len(more)}-{done}")
        return Step(text="Report: done.", **usage(20_000))

    def main(body: Mapping[str, Any], turns: int) -> Step:
        if turns == 0:
            call: dict[str, object] = {"description": "job", "prompt": "TASK-SUB: do the job"}
            call |= {"subagent_type": kind, "run_in_background": False}  # as installed
            return Step(tool_calls=[ToolUse("Agent", call)], **usage(30_000))
        if turns == 1:
            found = re.findall(r"agentId: ?([a-z0-9]+)", json.dumps(body["messages"]))
            agent_ids.extend(found)
            search = {"query": "select:SendMessage", "max_results": 1}
            return Step(tool_calls=[ToolUse("ToolSearch", search)], **usage(31_000))
        if turns == 2:
            send = {"to": agent_ids[-1], "message": "TASK-MORE one more look"}
            return Step(tool_calls=[ToolUse("SendMessage", send)], **usage(32_000))
        return Step(text="Main: done.", **usage(33_000))

    def route(body: Mapping[str, Any]) -> Step:
        marker, turns = marker_of(body)
        if marker == "TASK-SUB":
            return sub(body)
        if marker == "TASK-MAIN" and body.get("tools"):
            return main(body, turns)
        return Step(text="ok")

    run = run_routed(env, project, home, "TASK-MAIN delegate", route)
    assert run.proc.returncode == 0, run.proc.stderr[-2000:]
    assert agent_ids, "the Agent result named no agent id"
    continued = [b for b in sub_bodies if "TASK-MORE" in json.dumps(b["messages"])]
    assert len(continued) == second_run + 1  # the agent was continued and ran again
    noted = [i for i, b in enumerate(sub_bodies) if NOTE in run.last_user_text(b)]
    assert noted == []  # neither run came near its maxTurns
    # The continuation as Claude Code wrote it in the agent's file: a meta user message
    # from the coordinator, after the agent's final report.
    (agent_file,) = (home / ".claude" / "projects").glob("*/*/subagents/agent-*.jsonl")
    lines = [json.loads(line) for line in agent_file.read_text().splitlines()]
    prompts = [r for r in lines if r.get("type") == "user" and "TASK-MORE" in json.dumps(r)]
    assert prompts
    assert isinstance(prompts[0]["message"]["content"], str)
    assert prompts[0].get("isMeta") is True
    assert prompts[0].get("origin") == {"kind": "coordinator"}
