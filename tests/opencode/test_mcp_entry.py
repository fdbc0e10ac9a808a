"""The ``mcp`` entry install merges into ``opencode.json`` for ``session_history``, and
what uninstall leaves where the file changed since (the real OpenCode starting it is
``tests/e2e/test_opencode_handoff.py``)."""

from __future__ import annotations

from ctxrelay.hooks.history import MODEL_TOOL_NAME
from ctxrelay.opencode.setup.mcp import CONFIG_SCHEMA, mcp_entry, registration
from ctxrelay.opencode.setup.mcp import MODEL_TOOL_NAME as OPENCODE_TOOL


def test_the_entry_runs_ctxrelay_opencode_mcp_as_a_local_server() -> None:
    assert mcp_entry("/opt/venv/bin/ctxrelay") == {
        "type": "local",
        "command": ["/opt/venv/bin/ctxrelay", "opencode", "mcp"],
    }
    assert mcp_entry("'/a b/python' -m ctxrelay")["command"] == [
        "/a b/python",
        "-m",
        "ctxrelay",
        "opencode",
        "mcp",
    ]
    assert registration("ctxrelay") == {
        "$schema": CONFIG_SCHEMA,  # OpenCode adds it at start to a file without one
        "mcp": {"ctxrelay": mcp_entry("ctxrelay")},
    }


def test_the_model_calls_it_by_opencodes_join_of_server_and_tool() -> None:
    assert OPENCODE_TOOL == "ctxrelay_session_history"
    assert MODEL_TOOL_NAME == "mcp__ctxrelay__session_history"  # Claude Code's, not this
