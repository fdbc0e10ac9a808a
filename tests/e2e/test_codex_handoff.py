"""The Codex main-session handoff on the real CLI, offline: ``codex exec`` below the
slider gets no ask; at the slider ``Stop`` asks once for a handoff file, the model
writes it in the same turn, and the next fresh session is pointed at it: again after a
session that got no response, never after one that did."""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget.triggers import context_window_for, main_budget
from ctxrelay.cli import main as ctxrelay
from ctxrelay.testing import Fault, OpenAIServer, Step, ToolUse
from tests.analyze._ccusage import compare
from tests.e2e._codex import MODEL, codex_home, exec_codex, run_exec
from tests.e2e._codex import input_texts as texts

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

TARGET = main_budget(context_window_for(MODEL)).handoff_target or 0
HANDOFF = "# Handoff\n\n## Goal\nShip the parser.\n\n## Next step\nRun make test.\n"
ASK = "[ctxrelay] Hand off now"
ANSWER = "Part one is done; part two is left."


def _calls(body: Mapping[str, Any]) -> list[str]:
    """The commands of the function calls in the request's history, in order."""
    return [
        json.loads(item.get("arguments") or "{}").get("cmd", "")
        for item in body.get("input") or ()
        if isinstance(item, dict) and item.get("type") == "function_call"
    ]


def route(body: Mapping[str, Any]) -> Step:
    """A long turn: the task's work is one command that takes the context to the slider;
    the ask comes inside the turn (PostToolUse context), the model writes the file and
    ends the turn with its answer."""
    seen = texts(body)
    calls = _calls(body)
    asks = [t for t in seen if ASK in t]
    if any("printf" in c for c in calls):
        return Step(text=ANSWER, input_tokens=TARGET + 200)
    if asks:
        path = asks[-1].split("exactly this path:\n\n    ", 1)[1].split("\n", 1)[0]
        write = f"printf %s {shlex.quote(HANDOFF)} > {shlex.quote(path)}"
        return Step(tool_calls=[ToolUse("exec_command", {"cmd": write})], input_tokens=TARGET)
    if calls:
        return Step(text="worked a lot", input_tokens=TARGET)
    if any("FAIL" in t for t in seen[-1:]):
        return Step(fault=Fault.http(400, "rejected"))  # the session never gets a response
    if any("BIG" in t for t in seen[-1:]):
        work = ToolUse("exec_command", {"cmd": "echo working"})
        return Step(tool_calls=[work], input_tokens=TARGET)
    return Step(text="worked a little", input_tokens=1_000)


def test_the_ask_comes_at_the_slider_once_and_the_next_session_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIServer(route) as server:
        home, project = codex_home(tmp_path, server, monkeypatch)
        assert ctxrelay(["codex", "install", "--user"]) == 0
        capsys.readouterr()

        run_exec(project, "SMALL: a little work")
        small = server.requests_to("/v1/responses")
        assert len(small) == 1  # below the slider: no ask, no second request

        server.clear()
        # From a subfolder of the project, in one long turn: asked inside the turn, and
        # the file goes to the project's root, where the next session looks.
        (project / "src").mkdir()
        answer = tmp_path / "answer.txt"
        events = run_exec(project / "src", "BIG: a lot of work", "-o", str(answer))
        asked = [r.body for r in server.requests_to("/v1/responses")]
        # The whole history is resent each time: the last request holds every ask.
        hints = [t for t in texts(asked[-1]) if ASK in t]
        assert len(hints) == 1  # asked once, inside the turn; not again at its Stop
        assert not hints[0].startswith("<hook_prompt")
        assert len(asked) == 3  # the work, the write, the answer
        replies = [
            e["item"]["text"] for e in events if e.get("item", {}).get("type") == "agent_message"
        ]
        assert replies == [ANSWER]  # the task's answer, not a line about the file
        assert answer.read_text().strip() == ANSWER
        assert not (project / "src" / ".ctxrelay").exists()
        files = sorted((project / ".ctxrelay" / "handoff").glob("handoff-*.md"))
        assert [f.read_text() for f in files] == [HANDOFF]

        # A session whose request got no response: pointed at the file, consumed nothing.
        server.clear()
        failed = exec_codex(project, "FAIL: carry on")
        assert failed.returncode != 0
        sent = server.requests_to("/v1/responses")
        assert sent
        assert any(t.startswith("[ctxrelay] Resume the work") for t in texts(sent[0].body))

        server.clear()
        run_exec(project, "SMALL: carry on")
        first = server.requests_to("/v1/responses")[0].body
        resume = [t for t in texts(first) if t.startswith("[ctxrelay] Resume the work")]
        assert len(resume) == 1
        assert str(files[0]) in resume[0]
        assert "Run make test." in resume[0]
        assert json.dumps(first).count(str(files[0])) >= 1

        # That session got its response: the file is used, the next start gets nothing.
        server.clear()
        run_exec(project, "SMALL: something else")
        later = server.requests_to("/v1/responses")[0].body
        assert not any(t.startswith("[ctxrelay] Resume the work") for t in texts(later))

    # The runs' rollouts, as the real CLI wrote them: ccusage and ctxrelay analyze
    # count the same tokens and the same cost in each, and neither leaves one out.
    theirs, only_ours = compare(home)
    assert len(theirs) == 4  # the four that got a response; the failed one used no tokens
    assert only_ours == []


def resumed(server: OpenAIServer) -> bool:
    """Whether the session's first request was told to resume from a handoff."""
    first = server.requests_to("/v1/responses")[0].body
    return any(t.startswith("[ctxrelay] Resume the work") for t in texts(first))


def test_a_fresh_home_is_offered_no_handoff_of_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The records go with the project: a second person (their own HOME, Codex home
    and ctxrelay state, as a teammate, another machine or a CI run has) is told nothing
    of the first one's handoff, neither while it waits for its writer nor once used."""
    people = ("CODEX_HOME", "XDG_CONFIG_HOME", "CTXRELAY_STATE_DIR")
    for who in ("first", "second"):
        (tmp_path / who).mkdir()
    with OpenAIServer(route) as server:
        _, project = codex_home(tmp_path / "first", server, monkeypatch)
        first = {name: os.environ[name] for name in people}
        assert ctxrelay(["codex", "install", "--user"]) == 0
        run_exec(project, "BIG: a lot of work")
        assert list((project / ".ctxrelay" / "handoff").glob("handoff-*.md"))
        codex_home(tmp_path / "second", server, monkeypatch)  # its own project goes unused
        assert ctxrelay(["codex", "install", "--user"]) == 0
        second = {name: os.environ[name] for name in people}

        def as_(person: Mapping[str, str], prompt: str) -> bool:
            for name, value in person.items():
                monkeypatch.setenv(name, value)
            server.clear()
            run_exec(project, prompt)
            first_request = server.requests_to("/v1/responses")[0].body
            return any(t.startswith("[ctxrelay] Resume the work") for t in texts(first_request))

        assert not as_(second, "SMALL: something of mine")  # unused, but another person's
        assert as_(first, "SMALL: carry on")  # the writer's next session takes it, uses it
        assert not as_(second, "SMALL: something else of mine")  # used: offered nothing
        assert not as_(first, "SMALL: and more")
    capsys.readouterr()


def rollout_windows(home: Path) -> set[int]:
    """Every ``model_context_window`` Codex wrote into the rollouts under ``home``."""
    found: set[int] = set()
    for path in (home / "sessions").rglob("rollout-*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            payload = json.loads(line).get("payload")
            info = payload.get("info") if isinstance(payload, dict) else None
            for holder in (payload, info):
                if isinstance(holder, dict) and "model_context_window" in holder:
                    found.add(int(holder["model_context_window"]))
    return found


@pytest.mark.parametrize("model", ["gpt-5", "gpt-5-codex"])
def test_the_ask_uses_the_window_codex_wrote_into_the_rollout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], model: str
) -> None:
    # 170,000 tokens: past the default slider of the window Codex uses for every model
    # (258,400 on 0.171), below it for the table's 400,000 of gpt-5; the table's 200,000
    # for gpt-5-codex would call it 85%.
    tokens = 170_000

    def answer(body: Mapping[str, Any]) -> Step:
        if _calls(body):
            return Step(text="stopping here", input_tokens=tokens + 100)
        work = ToolUse("exec_command", {"cmd": "echo working"})
        return Step(tool_calls=[work], input_tokens=tokens)

    with OpenAIServer(answer) as server:
        home, project = codex_home(tmp_path, server, monkeypatch)
        assert ctxrelay(["codex", "install", "--user"]) == 0
        capsys.readouterr()
        run_exec(project, "BIG: a lot of work", "-m", model)
        asked = [t for r in server.requests_to("/v1/responses") for t in texts(r.body) if ASK in t]
    windows = rollout_windows(home)
    assert len(windows) == 1
    (window,) = windows
    assert tokens >= (main_budget(window).handoff_target or 0)  # the case: the slider is passed
    assert len(asked) == 1, asked
    assert f"{100 * tokens / window:.0f}% of the {window:,}-token window" in asked[0]
