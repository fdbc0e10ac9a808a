"""``session_history`` in the real Claude Code CLI (the one ``claude-agent-sdk`` bundles),
registered by ``ctxrelay claude install`` and called by the model as
``mcp__ctxrelay__session_history``, against the scripted server.

The project is trusted (as after the first-run dialog): under ``-p`` the tool of an
untrusted project was denied although its settings allow it. Three real sessions of one
project: an unrelated one, one that held a decision and wrote
a handoff, and the session that started from that handoff. The chain's links are set up
the way the hooks record them (``ctxrelay.claude._chain``): ctxrelay's ``SessionStart``
records which session each Claude Code process runs, the test the handoff's writer and
the session started from it (a user ``SessionStart`` hook tells the test each session's
transcript). The model in the last session searches for the
decision (found, from the session it was handed off from) and for the unrelated
session's text (not found: the privacy floor).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.claude.extras.mcp import MODEL_TOOL_NAME
from ctxrelay.cli.claude import main as claude_main
from ctxrelay.hooks import chain as _chain
from ctxrelay.testing import AnthropicServer, Step, ToolUse
from tests.conftest import claude_cli
from tests.e2e._claude import (
    BIN,
    claude_home,
    installed_home,
    run_cli,
    skip_first_run_dialogs,
    texts,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

DECISION = "Decision: we chose the LALR parser over PEG, for its error messages."
UNRELATED = "The unrelated secret is PLUM-42."
HANDOFF = "handoff-20261201T000000Z.md"

# Each SessionStart payload, for the test to find the sessions' transcripts.
_RECORD = (
    "import json, os, sys; p = json.load(sys.stdin); "
    "open(os.environ['CTXRELAY_STATE_DIR'] + '/starts.jsonl', 'a').write(json.dumps(p) + '\\n')"
)


def _route(body: Mapping[str, Any]) -> Step:
    """The scripted model: remembers what it is told, and searches the history for
    ``SEARCH:<a>|<b>``, one query after the other. A call Claude Code answered with "No
    such tool" (the project's server connects after the first request under ``-p``) is
    made again, a moment later."""
    if not body.get("tools"):
        return Step(text="ok")  # the CLI's side requests
    messages = body.get("messages") or []
    first = " ".join(texts(messages[0].get("content"))) if messages else ""
    last = messages[-1].get("content") if messages else None
    results = [
        b for b in (last if isinstance(last, list) else []) if b.get("type") == "tool_result"
    ]
    if "REMEMBER: " in first:
        return Step(text="Noted. " + first.split("REMEMBER: ", 1)[1].split("\n")[0])
    if "SEARCH:" not in first:
        return Step(text="ok")
    queries = first.split("SEARCH:", 1)[1].split()[0].split("|")
    done = [
        b
        for m in messages
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if b.get("type") == "tool_result" and "No such tool" not in json.dumps(b)
    ]
    if results and "No such tool" in json.dumps(results):
        return Step(
            tool_calls=[
                ToolUse(MODEL_TOOL_NAME, {"action": "search", "query": queries[len(done)]})
            ],
            delay_s=1.0,
        )
    if len(done) < len(queries):
        query = queries[len(done)]
        return Step(tool_calls=[ToolUse(MODEL_TOOL_NAME, {"action": "search", "query": query})])
    return Step(text="Searched.")


def _results(server: AnthropicServer) -> list[str]:
    """The tool results the model was sent, in order (a message Claude Code adds, such as
    the note that the server's tool is now there, can follow a result)."""
    found: list[str] = []
    for request in server.requests_to("/v1/messages"):
        body = request.body
        messages = body.get("messages") if isinstance(body, dict) else None
        blocks = [
            block
            for message in messages or []
            if isinstance(message.get("content"), list)
            for block in message["content"]
        ]
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                found.append(" ".join(texts(inner)) if isinstance(inner, list) else str(inner))
    return list(dict.fromkeys(found))


def test_the_model_finds_the_decision_of_the_session_it_was_handed_off_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project, env = claude_home(tmp_path)
    skip_first_run_dialogs(home, project, env)
    for key in ("HOME", "CTXRELAY_STATE_DIR"):
        monkeypatch.setenv(key, env[key])
    state = Path(env["CTXRELAY_STATE_DIR"])
    state.mkdir()
    assert claude_main(["install", "--project-dir", str(project), "--json"]) == 0
    assert (project / ".mcp.json").is_file()
    settings_file = project / ".claude" / "settings.json"
    settings = json.loads(settings_file.read_text())
    assert MODEL_TOOL_NAME in settings["permissions"]["allow"]
    record = f"{shlex.quote(sys.executable)} -c {shlex.quote(_RECORD)}"
    settings["hooks"]["SessionStart"].append({"hooks": [{"type": "command", "command": record}]})
    settings_file.write_text(json.dumps(settings))

    unrelated, earlier, current = (str(uuid.uuid4()) for _ in range(3))
    with AnthropicServer(_route) as server:
        for session, prompt in ((unrelated, UNRELATED), (earlier, DECISION)):
            done = run_cli(
                env, project, server, "-p", f"REMEMBER: {prompt}", "--session-id", session
            )
            assert done.returncode == 0, done.stderr[-2000:]
        starts = [json.loads(line) for line in (state / "starts.jsonl").read_text().splitlines()]
        paths = {s["session_id"]: s["transcript_path"] for s in starts}
        assert DECISION in Path(paths[earlier]).read_text()
        # The earlier session wrote the handoff, and the current one starts from it.
        _chain.record_written(project, HANDOFF, _chain.ChainLink("claude", earlier, paths[earlier]))
        here = str(Path(paths[earlier]).with_name(f"{current}.jsonl"))
        _chain.record_started(project, HANDOFF, _chain.ChainLink("claude", current, here))
        done = run_cli(env, project, server, "-p", "SEARCH:LALR|PLUM-42", "--session-id", current)
        assert done.returncode == 0, done.stderr[-2000:]
        results = [r for r in _results(server) if "No such tool" not in r]
    assert len(results) == 2, results
    found, floor = results
    assert DECISION in found, found
    assert "window 1 " in found  # the session it was handed off from
    assert floor == "no rows of earlier windows contain 'PLUM-42'", floor


def _list_route(body: Mapping[str, Any]) -> Step:
    """The scripted model of a ``claude run``: lists the history, again while Claude Code
    answers "No such tool" (the project's server connects after the first request)."""
    if not body.get("tools"):
        return Step(text="ok")
    results = [r for r in _results_of(body) if "No such tool" not in r]
    if results:
        return Step(text="Listed.")
    return Step(tool_calls=[ToolUse(MODEL_TOOL_NAME, {"action": "list"})], delay_s=0.5)


def _results_of(body: Mapping[str, Any]) -> list[str]:
    return [
        json.dumps(block)
        for message in body.get("messages") or []
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def test_claude_run_may_call_session_history_in_a_workspace_never_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No first-run dialogs answered: the project was never trusted in the UI, where the
    # settings' permissions.allow is ignored under -p.
    _, project, env = installed_home(tmp_path, monkeypatch)
    with AnthropicServer(_list_route) as server:
        done = subprocess.run(
            [
                *(str(BIN / "ctxrelay"), "claude", "run", "--json"),
                *("--model", "claude-sonnet-4-5", "--project-dir", str(project)),
                *("--claude", str(claude_cli()), "LIST the history"),
            ],
            cwd=project,
            env={**env, "ANTHROPIC_BASE_URL": server.base_url},
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        last = server.requests_to("/v1/messages")[-1].body
    results = [r for r in _results_of(last if isinstance(last, dict) else {}) if "No such" not in r]
    assert len(results) == 1, results
    assert "permission" not in results[0].lower(), results[0]
    assert '"is_error": true' not in results[0], results[0]
