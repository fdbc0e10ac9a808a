"""The OpenCode main session's handoff through its handlers, on payloads shaped as the
plugin sends them and a database written with OpenCode's schema: manual mode tells the
person once and the model at the next prompt; auto mode asks once inside the turn, and
the write of the reserved file answers a fresh session with the file; the fresh session
holds the handoff until the database has its first response, and a plain new session is
offered it until then."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.hooks import chain
from ctxrelay.hooks.handoff import consumed, injected_into, list_handoffs
from ctxrelay.opencode import handoff
from ctxrelay.opencode.config import load, set_values
from ctxrelay.transcripts import default_opencode_db, session_locator
from tests.transcripts._opencode_db import (
    add_message,
    add_part,
    add_session,
    assistant,
    create,
    tokens,
    user,
)

LIMIT = 100_000
OLD, FRESH, OTHER = "ses_old", "ses_fresh", "ses_other"
T0 = 1_796_000_000_000


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("OPENCODE_DB", raising=False)
    monkeypatch.delenv("CTXRELAY_OPENCODE_THRESHOLD", raising=False)
    root = tmp_path / "repo"
    root.mkdir()
    Path(default_opencode_db()).parent.mkdir(parents=True)
    create(Path(default_opencode_db())).close()
    return root


def payload(project: Path, session: str, prompt_tokens: int = 0, **more: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "session_id": session,
        "directory": str(project),
        "worktree": str(project),
        "ui": "run",
        "model": {"provider_id": "local", "model_id": "test-model", "context_limit": LIMIT},
        **more,
    }
    if prompt_tokens:
        out["step"] = {
            "message_id": "msg_1",
            "model_id": "test-model",
            "tokens": tokens(prompt_tokens - 1000, 20, read=1000),
            "cost": 0.0,
        }
    return out


def tool(project: Path, session: str, prompt_tokens: int, **args: Any) -> Any:
    name = "write" if "filePath" in args else "bash"
    return handoff.tool_after(
        payload(project, session, prompt_tokens, tool=name, call_id="c", args=args)
    )


def test_the_slider_and_mode_are_opencode_configs(project: Path) -> None:
    assert load(project).threshold == 60
    assert load(project).mode == "manual"
    set_values("project", project, threshold="45", mode="auto")
    assert (load(project).threshold, load(project).mode) == (45, "auto")


def test_auto_asks_once_inside_the_turn_then_hands_off_to_a_fresh_session(
    project: Path,
) -> None:
    set_values("project", project, mode="auto")
    assert tool(project, OLD, 20_000, command="ls") is None  # below the slider
    asked = tool(project, OLD, 70_000, command="ls")
    assert asked is not None
    assert asked.context
    assert asked.prompt is None
    assert "70,000 tokens, 70% of the 100,000-token window" in asked.context
    path = Path(asked.context.split("exactly this path:\n\n    ")[1].split("\n")[0])
    assert path.parent == project / ".ctxrelay" / "handoff"
    assert tool(project, OLD, 75_000, command="ls") is None  # once per window
    path.write_text("# Handoff\n\n## Goal\nShip.\n\n## Next step\nRun the tests.\n")
    fresh = tool(project, OLD, 76_000, filePath=str(path), content="…")
    assert fresh is not None
    assert fresh.clear
    assert fresh.prompt
    assert "## Next step\nRun the tests." in fresh.prompt
    assert "written by an OpenCode session (ses_old)" in fresh.prompt
    assert fresh.notice
    assert "fresh session" in fresh.notice
    assert chain.written_by(project, path.name) == chain.ChainLink(
        "opencode", OLD, session_locator(default_opencode_db(), OLD)
    )
    # handed off: nothing more of the old session, even at its turn's end
    assert tool(project, OLD, 80_000, filePath=str(path), content="…") is None
    assert handoff.session_idle(payload(project, OLD, 80_000)) is None


def _fresh_session(project: Path, name: str, *, answered: bool) -> None:
    db = Path(default_opencode_db())
    with create(db) if not db.exists() else _connect(db) as c:
        add_session(c, FRESH, str(project), T0)
        add_message(c, "m1", FRESH, user(T0), T0)
        text = f"[ctxrelay] Resume … .ctxrelay/handoff/{name} …"
        add_part(c, "p1", "m1", FRESH, {"type": "text", "text": text}, created_ms=T0)
        if answered:
            add_message(c, "m2", FRESH, assistant(T0 + 1, tokens(900, 10)), T0 + 1)


def _connect(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(db, isolation_level=None)


def _handed(project: Path) -> Path:
    set_values("project", project, mode="auto")
    asked = tool(project, OLD, 70_000, command="ls")
    path = Path(asked.context.split("exactly this path:\n\n    ")[1].split("\n")[0])
    path.write_text("# Handoff\n\n## Next step\nGo.\n")
    assert tool(project, OLD, 70_000, filePath=str(path), content="…") is not None
    return path


def test_the_fresh_session_holds_the_handoff_until_its_first_response(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _handed(project)
    handoff.fresh_started(payload(project, FRESH, from_session_id=OLD))
    assert [link.session_id for link in injected_into(project, path.name)] == [FRESH]
    # its first prompt is the handoff: it is offered nothing else
    assert handoff.chat_message(payload(project, FRESH, prompt="resume…")) is None
    # a plain new session while the fresh one runs and has not answered: offered nothing
    _fresh_session(project, path.name, answered=False)
    with monkeypatch.context() as other:  # another OpenCode process
        other.setattr(chain, "host_process", os.getpid)
        assert handoff.chat_message(payload(project, OTHER, prompt="hi")) is None
    assert not consumed(project, path.name)
    with _connect(Path(default_opencode_db())) as c:
        add_message(c, "m2", FRESH, assistant(T0 + 1, tokens(900, 10)), T0 + 1)
    handoff.session_idle(payload(project, FRESH, 1_000))
    assert consumed(project, path.name)
    fresh = chain.ChainLink("opencode", FRESH, session_locator(default_opencode_db(), FRESH))
    assert [link.session_id for link in chain.chain(project, fresh)] == [OLD, FRESH]


def test_a_fresh_session_killed_before_its_response_leaves_the_handoff(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _handed(project)
    dead = os.fork()
    if dead == 0:
        os._exit(0)
    os.waitpid(dead, 0)  # a process that ran the fresh session and is gone
    with monkeypatch.context() as gone:
        gone.setattr(chain, "host_process", lambda: dead)
        handoff.fresh_started(payload(project, FRESH, from_session_id=OLD))
    _fresh_session(project, path.name, answered=False)
    offered = handoff.chat_message(payload(project, OTHER, prompt="hi"))
    assert offered is not None
    assert offered.context
    assert path.name in offered.context
    assert not consumed(project, path.name)


def test_manual_tells_the_person_once_and_the_model_at_the_next_prompt(project: Path) -> None:
    handoff.chat_message(payload(project, OLD, prompt="start"))  # its first prompt
    told = handoff.session_idle(payload(project, OLD, 70_000))
    assert told is not None
    assert told.notice
    assert "Type handoff" in told.notice
    assert told.prompt is None
    assert told.context is None
    assert handoff.session_idle(payload(project, OLD, 71_000)) is None  # once
    note = handoff.chat_message(payload(project, OLD, prompt="go on"))
    assert note is not None
    assert note.context
    assert "handoff slider" in note.context
    asked = handoff.chat_message(payload(project, OLD, 72_000, prompt="handoff"))
    assert asked is not None
    assert asked.context
    assert "exactly this path" in asked.context
    assert list_handoffs(project) == []  # reserved, not written yet


def test_auto_asks_by_a_new_prompt_when_no_tool_call_crossed_the_slider(project: Path) -> None:
    set_values("project", project, mode="auto")
    asked = handoff.session_idle(payload(project, OLD, 70_000))
    assert asked is not None
    assert asked.prompt
    assert "exactly this path" in asked.prompt
    assert not asked.clear
    assert handoff.session_idle(payload(project, OLD, 70_000)) is None  # file not written


def test_a_subagents_session_never_hands_off(project: Path) -> None:
    set_values("project", project, mode="auto")
    handoff.session_created(payload(project, "ses_sub", parent_id=OLD, title="t"))
    assert handoff.session_idle(payload(project, "ses_sub", 90_000)) is None
    assert tool(project, "ses_sub", 90_000, command="ls") is None
    assert handoff.chat_message(payload(project, "ses_sub", prompt="x")) is None


def test_a_kill_before_the_fresh_session_is_made_leaves_the_handoff(project: Path) -> None:
    # the write answered `fresh`, and OpenCode died before the plugin made the session
    path = _handed(project)
    assert injected_into(project, path.name) == []
    offered = handoff.chat_message(payload(project, OTHER, prompt="hi"))
    assert offered is not None
    assert offered.context is not None
    assert path.name in offered.context
    assert not consumed(project, path.name)  # used up only at that session's response
