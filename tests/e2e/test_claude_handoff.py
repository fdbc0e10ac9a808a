"""The main-session handoff against the real Claude Code CLI (bundled by
``claude-agent-sdk``) and the project's scripted Anthropic-compatible server.

The plugin is installed into a temp project with ``ctxrelay claude install``, with a
temp ``HOME`` and state directory. The server answers by content (the newest ``TURN-…``
or ``TASK-…`` marker the user sent, and the step within that turn), never by order.
What the tests assert is what Claude Code showed or what the model was actually sent.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget.bounds import CONTEXT_PERCENT
from ctxrelay.budget.bounds import MAIN_OUTPUT_RESERVE as OUTPUT_RESERVE
from ctxrelay.claude.extras.statusline import status_line
from ctxrelay.claude.handoff import INSTALLED_SKILL
from ctxrelay.claude.handoff import consumed as handoff_consumed
from ctxrelay.cli.claude import main as install_main
from ctxrelay.testing import AnthropicServer, Step, ToolUse
from tests.conftest import claude_cli
from tests.e2e._claude import (
    BIN,
    Terminal,
    bodies,
    claude_home,
    install_plugin,
    run_cli,
    skip_first_run_dialogs,
    texts,
)
from tests.e2e._usage import usage

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

MODEL = "claude-sonnet-4-5"  # a 200k window for Claude Code and for the model-id rule
WINDOW = 200_000
AT = WINDOW * CONTEXT_PERCENT // 100
INSTALLED = f"/{INSTALLED_SKILL}"  # the handoff skill after `ctxrelay claude install`
HANDOFF_RE = re.compile(r"(/[^\s\"'\\]+/\.ctxrelay/handoff/handoff-\d{8}T\d{6}Z(?:-\d+)?\.md)")


def position(body: Mapping[str, Any], pattern: str) -> tuple[str | None, int]:
    """The newest marker matching ``pattern`` in the user's messages, and how many
    assistant responses came after the message that carried it."""
    messages = body.get("messages") or []
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") != "user":
            continue
        found = re.findall(pattern, "\n".join(texts(messages[i].get("content"))))
        if found:
            after = sum(1 for m in messages[i + 1 :] if m.get("role") == "assistant")
            return found[-1], after
    return None, 0


def after_last_assistant(body: Mapping[str, Any]) -> str:
    messages = body["messages"]
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    return "\n".join(t for m in messages[last + 1 :] for t in texts(m.get("content")))


@pytest.fixture
def claude_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path, dict[str, str]]:
    home, project, env = claude_home(
        tmp_path,
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        CLAUDE_CODE_ENABLE_TODO_TOOLS="1",  # task tools, off by default in -p mode
        CTXRELAY_CLAUDE_CLI=str(claude_cli()),
    )
    # This process reads the same state and config as the hooks do.
    for key in ("CTXRELAY_STATE_DIR", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(key, env[key])
    for key in ("CTXRELAY_MAIN_HANDOVER", "CTXRELAY_CONTEXT_WINDOW", "CLAUDE_PROJECT_DIR"):
        monkeypatch.delenv(key, raising=False)
    assert install_main(["install", "--project-dir", str(project), "--json"]) == 0
    return home, project, env


def claude(
    env: dict[str, str],
    project: Path,
    server: AnthropicServer,
    *args: str,
    stdin: str | None = None,
    timeout: float = 180,
    model: str = MODEL,
) -> tuple[list[dict[str, Any]], subprocess.CompletedProcess[str]]:
    """Run the CLI headless with stream-json output; returns its events."""
    proc = run_cli(
        env,
        project,
        server,
        "-p",
        *args,
        "--model",
        model,
        "--permission-mode",
        "bypassPermissions",
        "--output-format",
        "stream-json",
        "--verbose",
        stdin=stdin,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return events, proc


def shown_to_user(events: list[dict[str, Any]]) -> list[str]:
    """What Claude Code showed the user from hooks (a Stop hook's ``systemMessage``)."""
    return [
        str(e.get("content"))
        for e in events
        if e.get("type") == "system" and "ctxrelay:" in str(e.get("content", ""))
    ]


def by_turn(plan: Mapping[str, list[Step]]) -> Callable[[Mapping[str, Any]], Step]:
    """A route that answers the newest ``TURN-n`` marker's turn with its steps in order
    (and anything else with "ok")."""

    def route(body: Mapping[str, Any]) -> Step:
        marker, step = position(body, r"TURN-\d")
        steps = plan.get(marker or "", [])
        return steps[step] if step < len(steps) else Step(text="ok")

    return route


def resumed_turns(
    env: dict[str, str], project: Path, server: AnthropicServer, count: int
) -> list[list[str]]:
    """Turns ``TURN-1`` to ``TURN-count``, each after the first a new process resuming
    the session; what the hooks showed the user in each."""
    events, _ = claude(env, project, server, "TURN-1 look at the code")
    session = next(e["session_id"] for e in events if e.get("type") == "result")
    shown = [shown_to_user(events)]
    for n in range(2, count + 1):
        events, _ = claude(env, project, server, f"TURN-{n} go on", "--resume", session)
        shown.append(shown_to_user(events))
    return shown


# -- manual mode: the hints ---------------------------------------------------------------


def test_manual_hints_at_60_percent_and_for_a_completed_task_once_each(
    claude_env: tuple[Path, Path, dict[str, str]],
) -> None:
    _, project, env = claude_env
    create = ToolUse("TaskCreate", {"subject": "part one", "description": "the first part"})

    def complete(task_id: str) -> ToolUse:
        return ToolUse("TaskUpdate", {"taskId": task_id, "status": "completed"})

    plan: dict[str, list[Step]] = {
        "TURN-1": [Step(text="Read the code.", **usage(AT + 1_000))],
        "TURN-2": [Step(text="Still reading.", **usage(AT + 2_000))],
        "TURN-3": [
            Step(tool_calls=[create], **usage(AT + 3_000)),
            Step(tool_calls=[complete("1")], **usage(AT + 3_500)),
            Step(text="Part one is done.", **usage(AT + 4_000)),
        ],
        "TURN-4": [
            Step(
                tool_calls=[ToolUse("TaskCreate", {"subject": "two", "description": "2"})],
                **usage(AT + 5_000),
            ),
            Step(tool_calls=[complete("2")], **usage(AT + 5_500)),
            Step(text="Part two is done.", **usage(AT + 6_000)),
        ],
    }

    with AnthropicServer(by_turn(plan)) as server:
        # Each later turn is a new process resuming the session: the once-only state is
        # durable across restarts.
        shown = resumed_turns(env, project, server, len(plan))
        sent = json.dumps(bodies(server))

    # Turn 1 crossed 60% of the 200k window: one hint, with the numbers.
    assert len(shown[0]) == 1
    assert f"Run {INSTALLED} to" in shown[0][0]  # the name that works after install
    assert f"{AT + 1_000:,} tokens" in shown[0][0]
    assert f"handoff point is {CONTEXT_PERCENT}%" in shown[0][0]
    # Turn 2 is still over 60%: no second context hint in this episode.
    assert shown[1] == []
    # Turn 3 completed a task (TaskUpdate): the task hint, once.
    assert len(shown[2]) == 1
    assert "task was just marked completed" in shown[2][0]
    assert f"Run {INSTALLED} to" in shown[2][0]
    # Turn 4 completed another: no second task hint.
    assert shown[3] == []
    # The hint is for the user: it never reached the model.
    assert f"Run {INSTALLED}" not in sent


# -- auto mode under `ctxrelay claude run` -----------------------------------------------


HANDOFF_BODY = (
    "# Handoff\n\n## Goal\nBuild the widget (TASK-AUTO).\n\n## State\nPart one done.\n\n"
    "## Decisions\nKeep the old API.\n\n## Files touched\nwidget.py: new.\n\n"
    "## Commands that matter\nmake test (passes)\n\n## Next step\n"
    "NEXT-STEP-MARKER: write part two of widget.py\n"
)


def auto_task(body: Mapping[str, Any]) -> Step:
    """The scripted model of a `claude run` in auto mode: part one reaches the slider,
    the handoff file is written when asked, and a resumed session finishes."""
    first = "\n".join(texts(body["messages"][0].get("content")))
    tail = after_last_assistant(body)
    if "[ctxrelay] Resume" in first:
        return Step(text="Resumed; part two written. All done.", **usage(12_000))
    if "Stop hook additional context" in tail and "Hand off now" in tail:
        path = HANDOFF_RE.search(tail)
        assert path is not None, tail[:2000]
        write = ToolUse("Write", {"file_path": path.group(1), "content": HANDOFF_BODY})
        return Step(tool_calls=[write], **usage(AT + 9_000))
    if "TASK-AUTO" in first and body["messages"][-1].get("role") == "user":
        if any(m.get("role") == "assistant" for m in body["messages"]):
            return Step(text="Handoff file written.", **usage(AT + 9_500))
        return Step(text="Part one of the widget is done.", **usage(AT + 5_000))
    return Step(text="ok")


def claude_run(project: Path, env: Mapping[str, str]) -> list[str]:
    """The command line of ``ctxrelay claude run --mode auto --json`` on the widget task."""
    return [
        str(BIN / "ctxrelay"),
        "claude",
        "run",
        "--mode",
        "auto",
        "--json",
        "--model",
        MODEL,
        "--permission-mode",
        "bypassPermissions",
        "--project-dir",
        str(project),
        "--claude",
        env["CTXRELAY_CLAUDE_CLI"],
        "TASK-AUTO build the widget",
    ]


def test_auto_mode_under_ctxrelay_claude_run_hands_off_to_a_fresh_session(
    claude_env: tuple[Path, Path, dict[str, str]],
) -> None:
    _, project, env = claude_env
    handoff_body = HANDOFF_BODY
    with AnthropicServer(auto_task) as server:
        proc = subprocess.run(
            claude_run(project, env),
            cwd=project,
            env={**env, "ANTHROPIC_BASE_URL": server.base_url},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        requests = bodies(server)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    handoffs = [e for e in events if e["event"] == "handoff"]
    assert len(handoffs) == 1
    path = Path(handoffs[0]["path"])
    assert path.parent == project / ".ctxrelay" / "handoff"
    assert path.read_text() == handoff_body
    end = events[-1]
    assert end["event"] == "end"
    assert end["status"] == "completed"
    assert len(end["sessions"]) == 2
    assert end["sessions"][0] != end["sessions"][1]

    # The write prompt reached the model as the Stop hook's feedback, naming the file.
    asked = [b for b in requests if "Hand off now" in after_last_assistant(b)]
    assert asked
    assert str(path) in after_last_assistant(asked[0])
    # The fresh session's first request carries the resume prompt: the file, the next
    # step, and none of the old conversation.
    fresh = [b for b in requests if "[ctxrelay] Resume" in json.dumps(b["messages"][:1])]
    assert fresh
    first = fresh[0]
    assert [m["role"] for m in first["messages"]].count("assistant") == 0
    resume = "\n".join(texts(first["messages"][0]["content"]))
    assert str(path) in resume
    assert "NEXT-STEP-MARKER: write part two of widget.py" in resume
    assert "TASK-AUTO build the widget" not in json.dumps(first["messages"])
    # Its SessionStart injected the file, as the writer's /clear would, and the handoff
    # was used once that first request went out with it: read off the fresh session's
    # transcript, which links it to the session that wrote the file.
    from ctxrelay.claude.handoff import continue_prompt
    from ctxrelay.claude.host import injection_mark
    from ctxrelay.hooks import chain as _chain

    assert injection_mark(path) in resume
    assert continue_prompt(path) in resume
    assert handoff_consumed(project, path.name)
    writer, fresh_id = end["sessions"]
    assert [x.session_id for x in _chain.chain(project, fresh_id)] == [writer, fresh_id]


# A user hook that blocks the fresh session's SessionStart (the one `claude run` names
# the handoff to) until the run is killed; it says so with ``reached``.
GATE = """\
[ -n "$CTXRELAY_RESUME_HANDOFF" ] || exit 0
touch "$GATES/reached"
while kill -0 "$CLAUDE_PID" 2>/dev/null; do sleep 0.05; done
"""


def test_a_claude_run_killed_before_the_fresh_sessions_first_request_leaves_the_handoff(
    claude_env: tuple[Path, Path, dict[str, str]],
) -> None:
    import os
    import signal

    from ctxrelay.claude import handoff
    from ctxrelay.hooks.handoff import list_handoffs
    from tests.e2e._process import wait_until

    _, project, env = claude_env
    gates = project.parent / "gates"
    gates.mkdir()
    (gates / "gate.sh").write_text(GATE)
    command = f'GATES="{gates}" sh "{gates / "gate.sh"}"'
    hook = [{"hooks": [{"type": "command", "command": command, "timeout": 120}]}]
    settings = project / ".claude" / "settings.local.json"
    settings.write_text(json.dumps({"hooks": {"SessionStart": hook}}))

    with AnthropicServer(auto_task) as server:
        run = subprocess.Popen(
            claude_run(project, env),
            cwd=project,
            env={**env, "ANTHROPIC_BASE_URL": server.base_url},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            wait_until((gates / "reached").exists, "the fresh session's start", 240)
            (path,) = list_handoffs(project)
            wait_until(lambda: bool(handoff.injected_into(project, path.name)), "the injection")
        finally:
            os.killpg(run.pid, signal.SIGKILL)  # the run, its CLI and their hooks
            run.wait()

        def resumed() -> list[dict[str, Any]]:
            return [b for b in bodies(server) if "[ctxrelay] Resume" in _first_text(b)]

        assert resumed() == []  # the fresh session never sent its first request
        assert not handoff_consumed(project, path.name)

        # A plain `claude` afterwards starts from it (auto mode), and uses it up.
        settings.unlink()
        claude({**env, "CTXRELAY_MAIN_HANDOVER": "auto"}, project, server, "GO-ON next part")
        (first,) = resumed()
        assert "GO-ON next part" in _first_text(first)
        assert "NEXT-STEP-MARKER" in _first_text(first)
        assert "TASK-AUTO build the widget" not in json.dumps(first["messages"])
    assert handoff_consumed(project, path.name)


def _first_text(body: Mapping[str, Any]) -> str:
    return "\n".join(texts(body["messages"][0].get("content")))


# -- SessionStart after /clear -----------------------------------------------------------


def test_clear_starts_a_session_that_resumes_from_the_latest_handoff(
    claude_env: tuple[Path, Path, dict[str, str]],
) -> None:
    from ctxrelay.claude import handoff

    _, project, env = claude_env
    path = handoff.new_handoff_path(project)
    path.write_text("# Handoff\n\n## Goal\nGOAL-MARKER\n\n## Next step\nSTEP-MARKER: run it\n")

    def route(body: Mapping[str, Any]) -> Step:
        marker, _ = position(body, r"TASK-[A-Z]+")
        return Step(text=f"answer to {marker}", **usage(30_000))

    messages = [
        {"type": "user", "message": {"role": "user", "content": "TASK-OLD earlier work"}},
        {"type": "user", "message": {"role": "user", "content": "/clear"}},
        {"type": "user", "message": {"role": "user", "content": "TASK-NEW go on"}},
    ]
    with AnthropicServer(route) as server:
        events, _ = claude(
            env,
            project,
            server,
            "--input-format",
            "stream-json",
            stdin="".join(json.dumps(m) + "\n" for m in messages),
        )
        requests = bodies(server)
    starts = [
        e
        for e in events
        if e.get("subtype") == "hook_response" and "SessionStart" in str(e.get("hook_name"))
    ]
    assert any("clear" in str(e.get("hook_name")) for e in starts)
    new = [b for b in requests if "TASK-NEW" in json.dumps(b["messages"])]
    assert len(new) == 1
    sent = json.dumps(new[0])
    assert "[ctxrelay] Resume" in sent
    assert str(path) in sent
    assert "GOAL-MARKER" in sent
    assert "STEP-MARKER: run it" in sent
    assert "TASK-OLD" not in json.dumps(new[0]["messages"])  # /clear really cleared
    # Before /clear nothing was injected; after it, the handoff is consumed.
    old = [b for b in requests if "TASK-OLD" in json.dumps(b["messages"])]
    assert old
    assert "[ctxrelay] Resume" not in json.dumps(old[0])
    assert handoff.latest_unconsumed(project) is None


# -- the usable limit and the skill --------------------------------------------------------


def test_at_the_usable_limit_tools_are_denied_but_the_handoff_write_runs(
    claude_env: tuple[Path, Path, dict[str, str]],
) -> None:
    _, project, env = claude_env
    limit = WINDOW - OUTPUT_RESERVE
    written = project / "written-by-bash.txt"

    def route(body: Mapping[str, Any]) -> Step:
        marker, step = position(body, r"TASK-LIMIT")
        if marker is None:
            return Step(text="ok")
        if step == 0:
            bash = ToolUse("Bash", {"command": f"echo hi > {written}", "description": "w"})
            return Step(tool_calls=[bash], **usage(limit + 500))
        if step == 1:
            denied = after_last_assistant(body)
            found = HANDOFF_RE.search(denied)
            assert found is not None, denied[:2000]
            content = "# Handoff\n\n## Next step\nLIMIT-NEXT\n"
            write = ToolUse("Write", {"file_path": found.group(1), "content": content})
            return Step(tool_calls=[write], **usage(limit + 900))
        return Step(text="Handoff written; stopping.", **usage(limit + 1_000))

    with AnthropicServer(route) as server:
        claude(env, project, server, "TASK-LIMIT keep working")
        requests = bodies(server)
    assert len(requests) >= 3
    denied = after_last_assistant(requests[1])
    assert "[ctxrelay] Denied" in denied
    assert f"usable limit of {limit:,}" in denied
    assert not written.exists()  # the Bash call never ran
    files = list((project / ".ctxrelay" / "handoff").glob("handoff-*.md"))
    assert len(files) == 1
    assert "LIMIT-NEXT" in files[0].read_text()  # the handoff Write was allowed


@pytest.mark.parametrize(
    ("model", "switch", "window"),
    [
        ("claude-sonnet-4-5[1m]", None, 1_000_000),  # a 200k model opted into 1M
        ("claude-sonnet-5", "1", 200_000),  # a 1M model held to 200k by Claude Code
    ],
)
def test_the_usable_limit_is_the_one_of_the_window_claude_code_uses(
    claude_env: tuple[Path, Path, dict[str, str]], model: str, switch: str | None, window: int
) -> None:
    _, project, env = claude_env
    if switch is not None:
        env = {**env, "CLAUDE_CODE_DISABLE_1M_CONTEXT": switch}
    small = WINDOW - OUTPUT_RESERVE + 8_000  # past the usable limit of a 200k window
    tokens = small if window == 200_000 else 175_000
    written = project / "written-by-bash.txt"

    def route(body: Mapping[str, Any]) -> Step:
        marker, step = position(body, r"TASK-WINDOW")
        if marker is None:
            return Step(text="ok")
        if step == 0:
            bash = ToolUse("Bash", {"command": f"echo hi > {written}", "description": "w"})
            return Step(tool_calls=[bash], **usage(tokens))
        return Step(text="done", **usage(tokens + 100))

    with AnthropicServer(route) as server:
        events, _ = claude(env, project, server, "TASK-WINDOW go", model=model)
        requests = bodies(server)
    result = next(e for e in events if e.get("type") == "result")
    assert [u["contextWindow"] for u in result["modelUsage"].values()] == [window]
    denied = after_last_assistant(requests[1])
    if window == 200_000:
        assert f"usable limit of {WINDOW - OUTPUT_RESERVE:,}" in denied
        assert not written.exists()
    else:
        assert "[ctxrelay] Denied" not in denied
        assert written.exists()


def test_a_result_that_would_jump_claude_codes_block_is_denied_and_handed_off(
    claude_env: tuple[Path, Path, dict[str, str]],
) -> None:
    # Below the usable limit, a command whose output Claude Code hands over whole (a
    # bashOutputMaxChars of 128,000) would jump past the point where Claude Code stops
    # sending: judged by the context alone it ran, and the session ended in "Prompt is
    # too long" with no handoff. Counting what it can return, it is denied and the
    # handoff gets written.
    _, project, env = claude_env
    (project / ".claude" / "settings.local.json").write_text(
        json.dumps({"bashOutputMaxChars": 128_000})
    )
    limit = WINDOW - OUTPUT_RESERVE
    context = limit - 17_000
    flood = "python3 -c \"print('y' * 120000)\""

    def route(body: Mapping[str, Any]) -> Step:
        marker, step = position(body, r"TASK-NEAR")
        if marker is None:
            return Step(text="ok")
        if step == 0:
            return Step(tool_calls=[ToolUse("Bash", {"command": flood})], **usage(context))
        told = after_last_assistant(body)
        found = HANDOFF_RE.search(told)
        if step == 1 and found is not None:
            content = "# Handoff\n\n## Next step\nNEAR-NEXT\n"
            write = ToolUse("Write", {"file_path": found.group(1), "content": content})
            return Step(tool_calls=[write], **usage(context + 1_000))
        return Step(text="Handoff written; stopping.", **usage(context + 1_500))

    with AnthropicServer(route) as server:
        done = run_cli(
            env,
            project,
            server,
            *("-p", "TASK-NEAR crunch the numbers", "--model", MODEL),
            *("--permission-mode", "bypassPermissions", "--output-format", "json"),
        )
        requests = bodies(server)
    assert "Prompt is too long" not in done.stdout, done.stdout[-2000:]
    assert done.returncode == 0, done.stderr[-2000:]
    denied = after_last_assistant(requests[1])
    assert "[ctxrelay] Denied" in denied
    assert f"the context is {context:,} tokens, and this call could add up to" in denied
    assert not any("y" * 120_000 in json.dumps(b) for b in requests)
    files = list((project / ".ctxrelay" / "handoff").glob("handoff-*.md"))
    assert len(files) == 1
    assert "NEAR-NEXT" in files[0].read_text()


def test_a_session_stopped_by_claude_codes_block_continues_after_clear(
    claude_env: tuple[Path, Path, dict[str, str]],
) -> None:
    # Below the usable limit, a pasted prompt jumps past the point where Claude Code stops
    # sending (window - CLAUDE_CODE_BLOCK_RESERVE): no request, no tool call for ctxrelay
    # to deny, no Stop hook, no handoff from the model. (A tool result can no longer make
    # that jump: the Read guard keeps a Read within half the room left.) The /clear
    # Claude Code asks for gets a handoff ctxrelay wrote from the transcript.
    _, project, env = claude_env
    below = WINDOW - OUTPUT_RESERVE - 1_000
    paste = "".join(f"note {i}: the parser keeps its old API\n" for i in range(1_600))
    app = project / "app.py"

    def route(body: Mapping[str, Any]) -> Step:
        marker, step = position(body, r"TASK-BLOCK")
        if marker is None:
            return Step(text="ok")
        if step == 0:
            write = ToolUse("Write", {"file_path": str(app), "content": "print('v2')\n"})
            return Step(tool_calls=[write], **usage(100_000))
        return Step(text="Ported the first half.", **usage(below))

    with AnthropicServer(route) as server:
        first = run_cli(
            env,
            project,
            server,
            *("-p", "TASK-BLOCK port the parser to v2", "--model", MODEL),
            *("--permission-mode", "bypassPermissions", "--output-format", "json"),
        )
        session = json.loads(first.stdout)["session_id"]
        stopped = run_cli(
            env,
            project,
            server,
            *("-p", f"Here are my notes:\n{paste}", "--resume", session, "--model", MODEL),
            *("--permission-mode", "bypassPermissions", "--output-format", "json"),
        )
        assert "Prompt is too long" in stopped.stdout, stopped.stdout[-2000:]
        assert not any("Here are my notes" in json.dumps(b) for b in bodies(server))
        assert not list(project.glob(".ctxrelay/handoff/handoff-*.md"))
        # The statusline on the refused session says what continues it, not a stale stage.
        (transcript,) = Path(env["HOME"]).glob(f".claude/projects/*/{session}.jsonl")
        line = status_line(
            {
                "session_id": session,
                "transcript_path": str(transcript),
                "cwd": str(project),
                "model": {"id": MODEL},
                "context_window": {
                    "context_window_size": WINDOW,
                    "current_usage": {"input_tokens": below},
                },
            }
        )
        assert "/clear continues from ctxrelay's handoff" in line, line
        cleared, _ = claude(env, project, server, "/clear", "--resume", session)
    files = list((project / ".ctxrelay" / "handoff").glob("handoff-*.md"))
    assert len(files) == 1
    text = files[0].read_text()
    assert "port the parser to v2" in text.split("## Goal", 1)[1].split("##", 1)[0]
    assert str(app) in text.split("## Files touched", 1)[1].split("##", 1)[0]
    assert session in text
    assert "session_history" in text
    started = [
        e
        for e in cleared
        if e.get("subtype") == "hook_response" and e.get("hook_event") == "SessionStart"
    ]
    assert any(files[0].name in json.dumps(e) for e in started), started


def _plugin_installed(env: dict[str, str], project: Path) -> None:
    """Swap the settings install for the plugin, installed from the repository's
    marketplace with the CLI's own commands."""
    assert install_main(["uninstall", "--project-dir", str(project), "--json"]) == 0
    assert not (project / ".claude" / "skills").exists()
    install_plugin(env, project)


@pytest.mark.parametrize("route", ["install", "plugin"])
def test_the_command_the_hint_names_runs_the_handoff_skill(
    claude_env: tuple[Path, Path, dict[str, str]], route: str
) -> None:
    _, project, env = claude_env
    if route == "plugin":
        _plugin_installed(env, project)
    expected = INSTALLED if route == "install" else "/ctxrelay:handoff"

    def route_by_turn(body: Mapping[str, Any]) -> Step:
        marker, _ = position(body, r"TASK-[A-Z]+")
        if marker == "TASK-WORK":
            return Step(text="Worked.", **usage(AT + 1_000))
        return Step(text="Will write it.", **usage(40_000))

    with AnthropicServer(route_by_turn) as server:
        events, _ = claude(env, project, server, "TASK-WORK read the code")
        hints = shown_to_user(events)
        assert len(hints) == 1, hints
        named = re.search(r"Run (/\S+) to write a handoff file", hints[0])
        assert named is not None, hints[0]
        command = named.group(1)
        assert command == expected
        # The user types exactly what the hint said, with a note for the next session.
        events, _ = claude(env, project, server, f"{command} TASK-SKILL focus on the parser")
        requests = [b for b in bodies(server) if "TASK-SKILL" in json.dumps(b["messages"])]
    assert requests
    sent = "\n".join(t for m in requests[0]["messages"] for t in texts(m.get("content")))
    # The skill ran: Claude Code ran its `ctxrelay claude handoff new-path` and sent its
    # body (an unknown command would reach the model as the bare text typed).
    found = HANDOFF_RE.search(sent)
    assert found is not None, sent[-3000:]
    path = Path(found.group(1))
    assert path.parent == (project / ".ctxrelay" / "handoff").resolve()
    assert not path.exists()  # reserved for Claude to write, not created
    assert "focus on the parser" in sent
    assert "## Commands that matter" in sent
    # The other route's name is not a command here: it reaches the model as typed text.
    other = "/ctxrelay:handoff" if route == "install" else INSTALLED
    with AnthropicServer([Step(text="?", **usage(40_000))]) as server:
        claude(env, project, server, f"{other} TASK-OTHER")
        sent = json.dumps(bodies(server)[0]["messages"])
    assert "TASK-OTHER" in sent
    assert not HANDOFF_RE.search(sent)
    assert "## Commands that matter" not in sent


# -- the statusline, in the interactive CLI ---------------------------------------------


def test_statusline_on_real_payloads_counts_down_and_records_the_window(
    claude_env: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    from ctxrelay.claude import _state
    from ctxrelay.cli.claude.statusline import main as statusline_main

    home, project, env = claude_env
    captured = tmp_path / "statusline-payloads.jsonl"
    settings = project / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    installed = data["statusLine"]["command"]
    assert installed.endswith("/ctxrelay claude statusline")  # this venv's, by absolute path
    # Keep a copy of every payload Claude Code sends, then run the installed command.
    data["statusLine"]["command"] = f"tee -a {captured} | {installed}"
    settings.write_text(json.dumps(data))
    skip_first_run_dialogs(home, project, env)
    context = AT + 4_000
    pct = context * 100 // WINDOW

    def payloads_seen() -> bool:
        return captured.exists() and captured.stat().st_size > 0

    with AnthropicServer([Step(text="Looked.", **usage(context))]) as server:
        term = Terminal(
            [env["CTXRELAY_CLAUDE_CLI"], "--model", MODEL],
            project,
            {**env, "ANTHROPIC_BASE_URL": server.base_url, "TERM": "xterm-256color"},
        )
        try:
            term.ready()
            term.wait(payloads_seen, "the first statusline")
            term.type("look around")
            term.wait(lambda: term.shows(f"ctx {pct}%"), f"the statusline at {pct}%")
        finally:
            term.kill()
        served = len(server.requests_to("/v1/messages"))
    assert served >= 1
    payloads = [json.loads(line) for line in captured.read_text().splitlines() if line.strip()]
    assert payloads, "Claude Code never ran the statusline"
    last = payloads[-1]
    reported = last["context_window"]["context_window_size"]
    assert last["context_window"]["current_usage"] is not None
    # What the command prints for Claude Code's own payload…
    import io

    out = io.StringIO()
    statusline_main([], io.StringIO(json.dumps(last)), out)
    line = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue()).strip()
    assert reported == WINDOW
    assert line.startswith(f"ctx {pct}% ")
    assert f"handoff due (60% reached, +4k): {INSTALLED}" in line
    # …is what the user saw at the bottom of the terminal.
    assert term.shows(f"ctx {pct}%")
    assert "handoff" in term.screen()
    # The window reached the hooks' state.
    assert _state.recorded_window(last["session_id"], None) == reported
