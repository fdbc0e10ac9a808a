"""One handoff chain across the real Claude Code, Codex and Gemini CLIs, offline (each
against its scripted server): ``ctxrelay handoff continue`` starts either agent on a
handoff another person's session wrote, its start hook gives it the file, and its first
request or response uses it up, recorded with its agent; Codex -> Claude Code -> Codex,
each continuing from the other's handoff and each ``session_history`` search finding
what the earlier agents said, two hops back; and a handoff a Gemini session wrote by
itself, taken up in Codex."""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import shlex
import subprocess
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget.triggers import context_window_for, main_budget
from ctxrelay.cli import main as ctxrelay
from ctxrelay.hooks import chain, handoff
from ctxrelay.hooks.state import owner, project_state
from ctxrelay.testing import AnthropicServer, Fault, GeminiServer, OpenAIServer, Step, ToolUse
from ctxrelay.transcripts import injection_mark
from tests.e2e._claude import bodies, claude_home, run_cli, skip_first_run_dialogs
from tests.e2e._claude import texts as claude_texts
from tests.e2e._codex import MODEL, codex_home, exec_codex, run_exec
from tests.e2e._codex import input_texts as codex_texts
from tests.e2e._gemini import HANDOFF as HANDOFF_BY_GEMINI
from tests.e2e._gemini import gemini_home, handoff_router, install_auto, run_gemini
from tests.e2e._gemini import texts as gemini_texts

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

HANDOFF = "# Handoff\n\n## Goal\nShip the parser.\n\n## Next step\nRun make test.\n"
RESUME = "[ctxrelay] Resume the work"
TARGET = main_budget(context_window_for(MODEL)).handoff_target or 0
CONTINUE = "[ctxrelay] Continue the work from the handoff file"


def used_by(project: Path, name: str) -> str:
    """The agent of the session that started from the handoff ``name``."""
    taken = chain.started_by(project, name)
    assert taken is not None
    return taken.host


def written_by_someone_else(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A handoff another person's Claude Code session wrote (their own state directory)."""
    mine = os.environ["CTXRELAY_STATE_DIR"]
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "theirs"))
    path = handoff.new_handoff_path(project)
    path.write_text(HANDOFF)
    chain.record_written(project, path.name, chain.ChainLink("claude", "theirs-1", "t.jsonl"))
    monkeypatch.setenv("CTXRELAY_STATE_DIR", mine)
    assert handoff.latest_unconsumed(project, owner=owner()) is None  # not offered: theirs
    return path


def test_continue_in_codex_takes_another_persons_handoff_on_purpose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIServer(lambda body: Step(text="on it", input_tokens=2_000)) as server:
        _, project = codex_home(tmp_path, server, monkeypatch)
        assert ctxrelay(["codex", "install", "--user"]) == 0
        path = written_by_someone_else(project, tmp_path, monkeypatch)
        argv = ["handoff", "continue", "--in", "codex", "--print", "--project-dir", str(project)]
        assert ctxrelay(argv) == 0
        first = codex_texts(server.requests_to("/v1/responses")[0].body)
        note = [t for t in first if t.startswith(RESUME)]
        assert len(note) == 1
        assert str(path) in note[0]
        assert "written by a Claude Code session (theirs-1)" in note[0]
        assert any(t.startswith(CONTINUE) for t in first)
    assert handoff.consumed(project, path.name)
    assert used_by(project, path.name) == "codex"
    capsys.readouterr()


def test_continue_in_claude_code_takes_another_persons_handoff_on_purpose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home, project, env = claude_home(tmp_path)
    skip_first_run_dialogs(home, project, env)
    with AnthropicServer(lambda body: Step(text="on it")) as server:
        for key, value in {**env, "ANTHROPIC_BASE_URL": server.base_url}.items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "manual")  # continue injects anyway
        assert ctxrelay(["claude", "install", "--project-dir", str(project), "--json"]) == 0
        path = written_by_someone_else(project, tmp_path, monkeypatch)
        argv = ["handoff", "continue", "--in", "claude", "--print", "--project-dir", str(project)]
        assert ctxrelay(argv) == 0
        sent = [b for b in bodies(server) if b.get("tools")]
        first = json.dumps(sent[0]["messages"])
        assert RESUME in first
        assert json.dumps(injection_mark(path))[1:-1] in first
        assert any(
            CONTINUE in t for m in sent[0]["messages"] for t in claude_texts(m.get("content"))
        )
    assert handoff.consumed(project, path.name)
    assert used_by(project, path.name) == "claude"
    capsys.readouterr()


def test_continue_in_gemini_takes_another_persons_handoff_on_purpose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with GeminiServer(lambda body: Step(text="on it", input_tokens=2_000)) as server:
        _, project = gemini_home(tmp_path, server, monkeypatch)
        monkeypatch.setenv("GEMINI_MODEL", "gemini-2.5-pro")  # no model router to script
        assert ctxrelay(["gemini", "install", "--project-dir", str(project)]) == 0
        path = written_by_someone_else(project, tmp_path, monkeypatch)
        argv = ["handoff", "continue", "--in", "gemini", "--print", "--project-dir", str(project)]
        assert ctxrelay(argv) == 0
        first = server.model_requests()[0].body
        sent = "\n".join(gemini_texts(c) for c in first["contents"])
        assert RESUME in sent
        assert str(path) in sent
        assert "written by a Claude Code session (theirs-1)" in sent
        assert "Run make test." in sent  # the file's content
    assert handoff.consumed(project, path.name)
    assert used_by(project, path.name) == "gemini"
    capsys.readouterr()


def test_a_handoff_a_gemini_session_wrote_is_taken_up_in_codex(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The Gemini session hands off by itself at the slider and writes the file; the
    # fresh context's first request is refused, so the handoff stays unused.
    old = [
        Step(text="Step one of the port is done.", input_tokens=700_000),
        Step(text="Wrote the handoff file.", input_tokens=706_000),
    ]
    gemini_route = handoff_router(old)

    def refuse_the_fresh_context(body: Mapping[str, Any]) -> Step:
        contents = body.get("contents") or []
        if len(contents) == 1 and "Resume the work" in gemini_texts(contents[0]):
            return Step(fault=Fault.http(400, "rejected"))
        step: Step = gemini_route(body)
        return step

    with (
        OpenAIServer(lambda body: Step(text="on it", input_tokens=2_000)) as oai,
        GeminiServer(refuse_the_fresh_context) as gem,
    ):
        (tmp_path / "cx").mkdir()
        codex_home(tmp_path / "cx", oai, monkeypatch)
        _, project = gemini_home(tmp_path, gem, monkeypatch)  # one state dir for both
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        install_auto(project)
        assert ctxrelay(["codex", "install", "--user"]) == 0
        run_gemini(project, "port the parser")
        (path,) = handoff.list_handoffs(project)
        assert path.read_text() == HANDOFF_BY_GEMINI
        assert not handoff.consumed(project, path.name)
        argv = ["handoff", "continue", "--in", "codex", "--print", "--project-dir", str(project)]
        assert ctxrelay(argv) == 0
        first = codex_texts(oai.requests_to("/v1/responses")[0].body)
        note = [t for t in first if t.startswith(RESUME)]
        assert len(note) == 1, records(project, tmp_path)
        assert str(path) in note[0]
        assert "Gemini CLI" in note[0]
        assert "Run the parser tests." in "\n".join(first)  # the file's content
    assert handoff.consumed(project, path.name)
    assert used_by(project, path.name) == "codex"
    capsys.readouterr()


def records(project: Path, tmp_path: Path) -> str:
    """What a failure should show: the project's handoff records and the Gemini session
    files' lines (each cut to its start)."""
    lines = [json.dumps(project_state(project).read(), indent=1)]
    for chat in sorted(tmp_path.glob("gemini-home/.gemini/tmp/*/chats/*.jsonl")):
        lines.append(str(chat))
        lines.extend(f"  {line[:160]}" for line in chat.read_text().splitlines())
    return "\n".join(lines)


def two_agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, oai: OpenAIServer
) -> tuple[Path, dict[str, str]]:
    """Codex and Claude Code installed in one project by one person; the project and
    Claude Code's environment."""
    (tmp_path / "cl").mkdir()
    _, project = codex_home(tmp_path, oai, monkeypatch)
    home, _, env = claude_home(tmp_path / "cl")
    env.update(
        CTXRELAY_STATE_DIR=os.environ["CTXRELAY_STATE_DIR"],
        XDG_CONFIG_HOME=os.environ["XDG_CONFIG_HOME"],
        CTXRELAY_MAIN_HANDOVER="auto",
    )
    skip_first_run_dialogs(home, project, env)
    monkeypatch.setenv("HOME", env["HOME"])
    assert ctxrelay(["codex", "install", "--user"]) == 0
    assert ctxrelay(["claude", "install", "--project-dir", str(project), "--json"]) == 0
    return project, env


# -- Codex -> Claude Code -> Codex -------------------------------------------------------

ASK = "[ctxrelay] Hand off now"
ALPHA = "ALPHA-FACT: the parser is LALR, chosen for its error messages."
BETA = "BETA-FACT: the tests run with make check."
SEARCH_TOOL = "mcp__ctxrelay.session_history"  # Codex's namespace, then the tool


def codex_outputs(body: Mapping[str, Any]) -> list[str]:
    """The text of every tool result in a Codex request's input."""
    out: list[str] = []
    for item in body.get("input") or ():
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            output = item.get("output")
            out.append(output if isinstance(output, str) else json.dumps(output))
    return out


def codex_route(body: Mapping[str, Any]) -> Step:
    """Hop 1 (HOP1): work past the slider, write the handoff it asks for, say ALPHA. Hop 3 (HOP3):
    find session_history behind Codex's tool search, then search for what both earlier
    agents said."""
    seen = codex_texts(body)
    items = [x for x in body.get("input") or () if isinstance(x, dict)]
    if any("HOP1" in t for t in seen):
        # A long turn, as ``codex exec`` hands off: one command takes the context to the
        # slider, the ask comes inside the turn (PostToolUse), the model writes the file
        # and ends the turn with its answer (saying ALPHA).
        calls = [json.dumps(x) for x in items if x.get("type") == "function_call"]
        asks = [t for t in seen if ASK in t]
        if any("printf" in c for c in calls):
            return Step(text=ALPHA, input_tokens=TARGET + 200)
        if asks:
            path = asks[-1].split("exactly this path:\n\n    ", 1)[1].split("\n", 1)[0]
            write = f"printf %s {shlex.quote(HANDOFF)} > {shlex.quote(path)}"
            return Step(tool_calls=[ToolUse("exec_command", {"cmd": write})], input_tokens=TARGET)
        work = ToolUse("exec_command", {"cmd": "echo working"})
        return Step(tool_calls=[work], input_tokens=TARGET)
    found = [x for x in items if x.get("type") == "tool_search_output" and x.get("tools")]
    if not found:  # the server may still be starting: search again a moment later
        return Step(tool_calls=[ToolUse("tool_search", {"query": "session history"})], delay_s=1)
    asked = [x for x in items if x.get("type") == "function_call"]
    queries = ["ALPHA-FACT", "BETA-FACT"]
    if len(asked) < len(queries):
        query = queries[len(asked)]
        return Step(tool_calls=[ToolUse(SEARCH_TOOL, {"action": "search", "query": query})])
    return Step(text="Found both.")


def claude_route(body: Mapping[str, Any]) -> Step:
    """Hop 2 (HOP2 WRITE:<path>): search the history for what Codex said, then write the
    next handoff (saying BETA) to the path the prompt names. A call Claude Code answered
    with "No such tool" (its MCP server connects after the first request under ``-p``) is
    made again, a moment later."""
    if not body.get("tools"):
        return Step(text="ok")  # the CLI's side requests
    messages = body.get("messages") or []
    every = json.dumps(messages)
    if "HOP2 WRITE:" not in every:
        return Step(text="ok")
    path = every.split("HOP2 WRITE:", 1)[1].split(".md", 1)[0] + ".md"
    results = [
        b
        for m in messages
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    real = [b for b in results if "No such tool" not in json.dumps(b)]
    search = ToolUse("mcp__ctxrelay__session_history", {"action": "search", "query": "ALPHA-FACT"})
    if not real:
        return Step(tool_calls=[search], delay_s=1.0 if results else 0.0)
    if len(real) == 1:
        text = HANDOFF.replace("Run make test.", BETA)
        return Step(tool_calls=[ToolUse("Write", {"file_path": path, "content": text})])
    return Step(text=f"{BETA} Handed off.")


def test_codex_then_claude_code_then_codex_each_continue_and_search_two_hops_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIServer(codex_route) as oai, AnthropicServer(claude_route) as ant:
        project, env = two_agents(tmp_path, monkeypatch, oai)

        # Hop 1, Codex: says ALPHA, writes the handoff at the slider.
        run_exec(project, "HOP1: start the parser")
        (first,) = handoff.list_handoffs(project)
        assert chain.written_by(project, first.name).host == "codex"  # type: ignore[union-attr]

        # Hop 2, Claude Code: given Codex's handoff at its start, finds what Codex said.
        second = handoff.new_handoff_path(project)
        done = run_cli(
            env,
            project,
            ant,
            "-p",
            f"HOP2 WRITE:{second}",
            "--permission-mode",
            "bypassPermissions",
        )
        assert done.returncode == 0, done.stderr[-2000:]
        sent = json.dumps([b["messages"] for b in bodies(ant) if b.get("tools")])
        assert "written by a Codex session" in sent
        assert ALPHA in sent  # session_history's search found the Codex thread's words
        assert second.read_text().count(BETA) == 1
        assert used_by(project, first.name) == "claude"
        wrote = chain.written_by(project, second.name)
        assert wrote is not None
        assert wrote.host == "claude"

        # Hop 3, Codex: given Claude Code's handoff, finds both earlier agents' words.
        oai.clear()
        run_exec(project, "HOP3: carry on")
        requests = oai.requests_to("/v1/responses")
        note = [t for t in codex_texts(requests[0].body) if t.startswith(RESUME)]
        assert len(note) == 1
        assert str(second) in note[0]
        assert "written by a Claude Code session" in note[0]
        outputs = codex_outputs(requests[-1].body)
        assert any(ALPHA in o for o in outputs)  # two hops back: the first Codex thread
        assert any(BETA in o for o in outputs)  # one hop back: the Claude Code session
        assert used_by(project, second.name) == "codex"

    # The chain, as `ctxrelay handoff list` shows it.
    capsys.readouterr()
    assert ctxrelay(["handoff", "list", "--json", "--project-dir", str(project)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["writer"]["agent"], r["started"]["agent"]) for r in rows] == [
        ("Codex", "Claude Code"),
        ("Claude Code", "Codex"),
    ]


# -- a kill before the first response, two starts at once ------------------------------


def written_by_me(project: Path) -> Path:
    path = handoff.new_handoff_path(project)
    path.write_text(HANDOFF)
    chain.record_written(project, path.name, chain.ChainLink("codex", "w-1", "w.jsonl"))
    return path


def claude_resumed(server: AnthropicServer) -> bool:
    sent = [b for b in bodies(server) if b.get("tools")]
    return bool(sent) and RESUME in json.dumps(sent[0]["messages"])


def test_a_codex_run_that_got_no_response_leaves_the_handoff_to_claude_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fail = Step(fault=Fault.http(400, "rejected"))
    with (
        OpenAIServer(lambda body: fail) as oai,
        AnthropicServer(lambda body: Step(text="on it")) as ant,
    ):
        project, env = two_agents(tmp_path, monkeypatch, oai)
        path = written_by_me(project)
        failed = exec_codex(project, "carry on")
        assert failed.returncode != 0  # its first request got no response: it ended
        first = codex_texts(oai.requests_to("/v1/responses")[0].body)
        assert any(t.startswith(RESUME) for t in first)  # it was given the handoff
        assert not handoff.consumed(project, path.name)
        done = run_cli(env, project, ant, "-p", "go on")
        assert done.returncode == 0, done.stderr[-2000:]
        assert claude_resumed(ant)  # offered again, to the other agent
    assert handoff.consumed(project, path.name)
    assert used_by(project, path.name) == "claude"
    capsys.readouterr()


def test_two_agents_started_at_once_on_one_handoff_one_takes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``codex exec`` and a ``claude -p`` started together, each held at its first
    request until both have started: exactly one was given the handoff."""
    both = threading.Barrier(2, timeout=120)

    def held(text: str) -> Callable[[Mapping[str, Any]], Step]:
        def route(body: Mapping[str, Any]) -> Step:
            if body.get("tools") or "input" in body:
                with contextlib.suppress(threading.BrokenBarrierError):
                    both.wait()  # the first request of each agent: both have started
            return Step(text=text)

        return route

    with OpenAIServer(held("codex")) as oai, AnthropicServer(held("claude")) as ant:
        project, env = two_agents(tmp_path, monkeypatch, oai)
        path = written_by_me(project)
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            codex = pool.submit(exec_codex, project, "carry on")
            claude = pool.submit(run_cli, env, project, ant, "-p", "go on")
            assert codex.result().returncode == 0
            assert claude.result().returncode == 0
        first = codex_texts(oai.requests_to("/v1/responses")[0].body)
        given = [any(t.startswith(RESUME) for t in first), claude_resumed(ant)]
    assert sorted(given) == [False, True]
    assert used_by(project, path.name) == ("codex" if given[0] else "claude")
    capsys.readouterr()
