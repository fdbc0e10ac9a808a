"""ctxrelay's plugin in the real OpenCode, offline: installed by ``ctxrelay opencode
install`` into a project that had no ``.opencode/``, the guard stops a ``cat`` of a
300 KB file and the model receives ctxrelay's reason as the call's result (read off the
next request the server got), uninstall leaves the project as found, and a plugin whose
hook command is missing lets the call run (fails open, one line on stderr)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.cli import main
from ctxrelay.opencode.host import OPENCODE
from ctxrelay.opencode.setup.plugin import render
from ctxrelay.testing import OpenAIServer, Script, Step, ToolUse
from tests.e2e._opencode import OpenCodeHome, is_title_request, opencode_home, title_router

SCHEMA = "https://opencode.ai/config.json"
BIG = "".join(f"line {i:06d} " + "x" * 40 + "\n" for i in range(6000))  # 318,000 bytes
STEPS = [
    Step(
        tool_calls=[ToolUse("bash", {"command": "cat big.txt", "description": "Print it"})],
        input_tokens=1000,
        output_tokens=10,
    ),
    Step(text="I will read a page instead.", input_tokens=1200, output_tokens=8),
]


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (``None``: a folder)."""
    return {
        str(p.relative_to(root)): None if p.is_dir() else p.read_bytes()
        for p in sorted(root.rglob("*"))
    }


def _tool_results(server: OpenAIServer) -> list[str]:
    """The tool messages the main agent's second request carried."""
    main_requests = [
        r.body for r in server.requests_to("/v1/chat/completions") if not is_title_request(r.body)
    ]
    assert len(main_requests) == len(STEPS)
    messages: list[dict[str, Any]] = main_requests[1]["messages"]
    return [str(m["content"]) for m in messages if m.get("role") == "tool"]


def _home(tmp_path: Path, server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> OpenCodeHome:
    home = opencode_home(tmp_path, server)
    for name in ("package.json", "package-lock.json"):  # the harness's stub: install's job
        (home.project / ".opencode" / name).unlink()
    for folder in ("node_modules", ""):
        (home.project / ".opencode" / folder).rmdir()
    (home.project / "big.txt").write_text(BIG)
    # OpenCode adds "$schema" to a project's opencode.json without one when it starts
    config = home.project / "opencode.json"
    config.write_text(json.dumps({"$schema": SCHEMA, **json.loads(config.read_text())}, indent=2))
    state = tmp_path / "state"
    home.env["CTXRELAY_STATE_DIR"] = str(state)
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(state))
    return home


def test_install_the_guard_stops_a_big_cat_and_uninstall_leaves_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIServer(Script(STEPS, router=title_router)) as server:
        home = _home(tmp_path, server, monkeypatch)
        found = _tree(home.project)
        assert main(["opencode", "install", "--project-dir", str(home.project)]) == 0
        said = capsys.readouterr().out
        assert "wrote the plugin" in said
        assert "so that OpenCode loads it offline" in said
        done = home.run("print big.txt")
        assert done.returncode == 0, done.stderr[-3000:]
        (result,) = _tool_results(server)
    assert result.startswith("ctxrelay guard: this would print 318,000 bytes of files")
    assert "the read tool with filePath" in result
    assert "ctxrelay opencode plugin" not in done.stderr  # nothing failed open
    # OpenCode loaded the plugin without npm-installing anything into the folder
    assert list((home.project / ".opencode" / "node_modules").iterdir()) == []
    assert main(["opencode", "uninstall", "--project-dir", str(home.project)]) == 0
    assert "removed the plugin" in capsys.readouterr().out
    assert _tree(home.project) == found


def test_the_plugin_fails_open_when_ctxrelay_is_not_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with OpenAIServer(Script(STEPS, router=title_router)) as server:
        home = _home(tmp_path, server, monkeypatch)
        folder = home.project / ".opencode"
        (folder / "plugin").mkdir(parents=True)
        missing = tmp_path / "gone" / "bin" / "python"  # ctxrelay's environment, removed
        (folder / "plugin" / "ctxrelay.ts").write_text(
            render(f"{missing} -I -m ctxrelay.opencode.hook")
        )
        prefilled = json.dumps({"dependencies": {"@opencode-ai/plugin": "1.18.33"}})
        (folder / "package.json").write_text(prefilled)
        lock = {"lockfileVersion": 3, "packages": {"": json.loads(prefilled)}}
        (folder / "package-lock.json").write_text(json.dumps(lock))
        (folder / "node_modules").mkdir()
        done = home.run("print big.txt")
        assert done.returncode == 0, done.stderr[-3000:]
        (result,) = _tool_results(server)
    # the cat ran: OpenCode's own cap (its last 50 KB, the whole output saved to a file)
    assert "Full output saved to" in result
    assert "ctxrelay guard" not in result
    failed = [line for line in done.stderr.splitlines() if "ctxrelay opencode plugin:" in line]
    assert failed
    assert all("ignored" in line and str(missing) in line for line in failed)
    # one line per event the plugin forwards, each once in this one-turn run
    events = [line.split("ctxrelay opencode plugin:", 1)[1].split()[0] for line in failed]
    assert len(events) == len(set(events))
    assert {"tool.execute.before", "tool.execute.after"} <= set(events) <= set(OPENCODE.handlers)


# A hook that answers by a script, to drive each answer word through the real plugin
# (what the handlers decide is tested apart; here, what OpenCode does with the answer).
SCRIPTED_HOOK = """
import json, sys
log_path, event = sys.argv[1], sys.argv[2]  # the plugin appends the event's name
payload = json.load(sys.stdin)
with open(log_path, "a") as log:
    log.write(json.dumps(payload) + "\\n")
answers = {
    "chat.message": {"context": "NOTE-FOR-THE-MODEL", "notice": "ctxrelay: NOTICE-AT-PROMPT"},
    "tool.execute.after": {"prompt": "BRIEF: go on from the file", "fresh": True},
    "fresh.started": {"notice": "ctxrelay: FRESH-STARTED"},
}
first_prompt = event == "chat.message" and payload["prompt"] == "hello"  # not the brief's
if event in answers and (first_prompt or event != "chat.message"):
    sys.stdout.write(json.dumps(answers[event]))
"""


def test_the_plugin_carries_out_each_answer_word(tmp_path: Path) -> None:
    steps = [
        Step(
            tool_calls=[ToolUse("bash", {"command": "echo hi", "description": "Say hi"})],
            input_tokens=1000,
            output_tokens=10,
        ),
        Step(text="The fresh session goes on.", input_tokens=500, output_tokens=6),
        Step(text="Said hi.", input_tokens=1100, output_tokens=4),
    ]
    with OpenAIServer(Script(steps, router=title_router)) as server:
        home = opencode_home(tmp_path, server)
        script, log = tmp_path / "hook.py", tmp_path / "payloads.jsonl"
        script.write_text(SCRIPTED_HOOK)
        events = ["chat.message", "tool.execute.after", "fresh.started", "session.created"]
        plugin = home.project / ".opencode" / "plugin"
        plugin.mkdir()
        command = f"{sys.executable} {script} {log}"
        (plugin / "ctxrelay.ts").write_text(render(command, events))
        done = home.run("hello")
        assert done.returncode == 0, done.stderr[-3000:]
        bodies = [
            r.body
            for r in server.requests_to("/v1/chat/completions")
            if not is_title_request(r.body)
        ]
    first, fresh, last = (b["messages"] for b in bodies)
    # context: a second text part of the user message
    assert first[-1]["content"][1]["text"] == "NOTE-FOR-THE-MODEL"
    # fresh: a new session whose request holds the system prompt and the brief only
    assert [m["role"] for m in fresh] == ["system", "user"]
    assert fresh[-1]["content"] == "BRIEF: go on from the file"
    # ... run to its end inside the hook; then the old session went on
    assert last[-1]["role"] == "tool"
    # notice: a stderr line in `opencode run`
    assert "ctxrelay: NOTICE-AT-PROMPT" in done.stderr
    assert "ctxrelay: FRESH-STARTED" in done.stderr
    payloads = [json.loads(line) for line in log.read_text().splitlines()]
    prompts = [p for p in payloads if p["hook_event_name"] == "chat.message"]
    assert [p["prompt"] for p in prompts] == ["hello", "BRIEF: go on from the file"]
    started = next(p for p in payloads if p["hook_event_name"] == "fresh.started")
    assert started["from_session_id"] == prompts[0]["session_id"]
    assert started["session_id"] == prompts[1]["session_id"] != prompts[0]["session_id"]
    after = next(p for p in payloads if p["hook_event_name"] == "tool.execute.after")
    assert after["model"] == {
        "provider_id": "local",
        "model_id": "test-model",
        "context_limit": 100_000,
        "output_limit": 4096,
    }
    # a step finishes (message.updated with time.completed) after its tool calls ran: at
    # the first step's tool.execute.after no step of the session has finished yet
    assert "step" not in after
    assert after["args"]["command"] == "echo hi"
