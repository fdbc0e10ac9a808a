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


def route(body: Mapping[str, Any]) -> Step:
    items = body.get("input") or []
    last = items[-1] if items else {}
    seen = texts(body)
    if isinstance(last, dict) and last.get("type") == "function_call_output":
        return Step(text="wrote the handoff file", input_tokens=TARGET)
    if seen and ASK in seen[-1]:
        path = seen[-1].split("exactly this path:\n\n    ", 1)[1].split("\n", 1)[0]
        write = f"printf %s {shlex.quote(HANDOFF)} > {shlex.quote(path)}"
        return Step(tool_calls=[ToolUse("exec_command", {"cmd": write})], input_tokens=TARGET)
    if any("FAIL" in t for t in seen[-1:]):
        return Step(fault=Fault.http(400, "rejected"))  # the session never gets a response
    if any("BIG" in t for t in seen[-1:]):
        return Step(text="worked a lot", input_tokens=TARGET)
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
        events = run_exec(project, "BIG: a lot of work")
        asked = [r.body for r in server.requests_to("/v1/responses")]
        # The whole history is resent each time: the last request holds every ask.
        hints = [t for t in texts(asked[-1]) if ASK in t]
        assert len(hints) == 1  # asked once: the Stop after writing had stop_hook_active
        assert hints[0].startswith('<hook_prompt hook_run_id="stop:')
        assert len(asked) == 3  # the answer, the write, the line naming the file
        replies = [
            e["item"]["text"] for e in events if e.get("item", {}).get("type") == "agent_message"
        ]
        assert replies == ["worked a lot", "wrote the handoff file"]
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
