"""``session_history`` after an auto handoff in Claude Code's interactive UI: the real CLI
on a pseudo-terminal, ``ctxrelay claude install`` (the MCP server in ``.mcp.json``,
approved and allowed: no dialog, no prompt) and the auto-handoff mod, against the
scripted server.

An unrelated session of the project comes first. Then a session works, decides something
the handoff file leaves out, and is handed off at 60% (the mod clears and resumes by
itself). The fresh session's model searches its history: the decision is found, from the
session it was handed off from; the unrelated session's text is not.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.claude.extras.mcp import MODEL_TOOL_NAME
from ctxrelay.cli.claude import main as install_main
from ctxrelay.testing import AnthropicServer, Step, ToolUse
from tests.conftest import claude_cli
from tests.e2e._claude import Terminal, bodies, claude_home, skip_first_run_dialogs, texts
from tests.e2e.test_claude_handoff import AT, HANDOFF_RE, MODEL, after_last_assistant

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

DECISION = "Decision: we chose the LALR parser over PEG, for its error messages."
UNRELATED = "The unrelated secret is PLUM-42."
HANDOFF_BODY = (
    "# Handoff\n\n## Goal\nBuild the parser (TASK-PARSER).\n\n## State\nThe grammar is done.\n\n"
    "## Decisions\nSee the code.\n\n## Files touched\nparser.py: new.\n\n"
    "## Commands that matter\nmake test (passes)\n\n## Next step\nWrite the error messages.\n"
)


def _step(context: int, text: str | None = None, tool_calls: tuple[ToolUse, ...] = ()) -> Step:
    return Step(
        text=text,
        tool_calls=tool_calls,
        input_tokens=5,
        cache_creation_input_tokens=100,
        cache_read_input_tokens=context - 105,
    )


def _everything(body: Mapping[str, Any]) -> str:
    return "\n".join(t for m in body["messages"] for t in texts(m.get("content")))


def _results(body: Mapping[str, Any]) -> list[str]:
    """The tool results this request carries: each one's own text."""
    found = []
    for message in body["messages"]:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")  # the tool's text, then Claude Code's reminders
                found.append(texts(inner)[0] if isinstance(inner, list) else str(inner))
    return found


def _route(body: Mapping[str, Any]) -> Step:
    """Answers by content: the unrelated session, the work at 60% and its handoff write,
    then in the fresh session two searches of the history."""
    if not body.get("tools"):
        return _step(1_000, text="ok")
    everything = _everything(body)
    if "[ctxrelay] Resume" in everything:
        done = [r for r in _results(body) if "No such tool" not in r]
        queries = ("LALR", "PLUM-42")
        if len(done) < len(queries):
            call = ToolUse(MODEL_TOOL_NAME, {"action": "search", "query": queries[len(done)]})
            return _step(12_000, tool_calls=(call,))
        return _step(12_000, text="Searched the history.")
    tail = after_last_assistant(body)
    if "Hand off now" in tail:
        found = HANDOFF_RE.search(tail)
        assert found is not None, tail[:2000]
        write = ToolUse("Write", {"file_path": found.group(1), "content": HANDOFF_BODY})
        return _step(AT + 2_000, tool_calls=(write,))
    if "TASK-PARSER" in everything:
        if _results(body):
            return _step(AT + 2_500, text="Handoff file written.")
        return _step(AT + 1_000, text=f"The grammar is done. {DECISION}")
    if "REMEMBER" in everything:
        return _step(1_000, text=f"Noted. {UNRELATED}")
    return _step(1_000, text="ok")


def test_after_an_auto_handoff_the_model_finds_the_old_decision_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project, env = claude_home(
        tmp_path,
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        CTXRELAY_MAIN_HANDOVER="auto",
        TERM="xterm-256color",
    )
    for key in ("HOME", "CTXRELAY_STATE_DIR", "XDG_CONFIG_HOME", "CTXRELAY_MAIN_HANDOVER"):
        monkeypatch.setenv(key, env[key])
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    assert install_main(["install", "--project-dir", str(project), "--json"]) == 0
    skip_first_run_dialogs(home, project, env)
    argv = [str(claude_cli()), "--model", MODEL, "--permission-mode", "acceptEdits"]

    with AnthropicServer(_route) as server:
        ui_env = {**env, "ANTHROPIC_BASE_URL": server.base_url}
        term = Terminal(argv, project, ui_env)  # the unrelated session
        try:
            term.ready()
            term.type(f"REMEMBER: {UNRELATED}")
            term.wait(lambda: term.shows("Noted."), "the unrelated session's reply")
        finally:
            term.kill()
        term = Terminal(argv, project, ui_env)
        try:
            term.ready()
            term.type("TASK-PARSER build the parser")
            term.wait(lambda: len(_searched(server)) >= 2, "the fresh session's two searches")
            dialog = term.shows("New MCP server found")
            asked = term.shows("Do you want to proceed?")
        finally:
            term.kill()
        requests = bodies(server)

    resumed = [b for b in requests if "[ctxrelay] Resume" in _everything(b)]
    found, floor = _searched(server)
    assert DECISION in found, found
    assert floor.strip() == "no rows of earlier windows contain 'PLUM-42'", floor
    assert DECISION not in _everything(resumed[0])  # not in the handoff, not in context
    assert not dialog
    assert not asked


def _searched(server: AnthropicServer) -> list[str]:
    """The history results the fresh session's model was sent so far, in order."""
    resumed = [b for b in bodies(server) if "[ctxrelay] Resume" in _everything(b)]
    found = [r for b in resumed for r in _results(b) if "No such tool" not in r]
    return list(dict.fromkeys(found))
