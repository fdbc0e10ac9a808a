"""The Gemini main session's handoff through the hook the CLI runs, on session files
shaped like the CLI's: manual mode tells the person once per window and the model at the
next prompt, ``handoff`` asks for the file, auto mode asks once; the file is offered to a
fresh session's first prompt until a session has started from it (a response after the
user message naming it); the slider is ``ctxrelay gemini config``'s."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget.triggers import context_window_for, main_budget
from ctxrelay.gemini import hook
from ctxrelay.gemini.config import load, set_values
from ctxrelay.gemini.handoff import settle
from ctxrelay.hooks import chain
from ctxrelay.hooks.handoff import RESUME_ENV, consumed, list_handoffs
from ctxrelay.transcripts import gemini_context, gemini_started
from tests.gemini._session import MODEL, SESSION, SessionFile

WINDOW = context_window_for(MODEL)
TARGET = main_budget(WINDOW).handoff_target or 0


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CTXRELAY_GEMINI_THRESHOLD", raising=False)
    root = tmp_path / "repo"
    root.mkdir()
    return root


def answer(event: str, project: Path, chat: Path, session: str = SESSION, **more: Any) -> Any:
    payload = {
        "session_id": session,
        "transcript_path": str(chat),
        "cwd": str(project),
        "hook_event_name": event,
        "timestamp": "2026-12-03T06:02:50.458Z",
        **more,
    }
    out = io.StringIO()
    assert hook.main(io.StringIO(json.dumps(payload)), out) == 0
    return json.loads(out.getvalue()) if out.getvalue() else None


def after(project: Path, chat: Path, session: str = SESSION) -> Any:
    return answer("AfterAgent", project, chat, session, prompt="go", stop_hook_active=False)


def before(project: Path, chat: Path, prompt: str, session: str = SESSION) -> Any:
    return answer("BeforeAgent", project, chat, session, prompt=prompt)


def test_the_session_file_gives_the_context_of_the_current_window(tmp_path: Path) -> None:
    chat = SessionFile().user("hi").gemini(5_000).gemini(9_000, twice=True)
    path = chat.write(tmp_path / "s.jsonl")
    now = gemini_context(path)
    assert now is not None
    assert (now.context_tokens, now.model, now.windows) == (9_000, MODEL, 1)
    chat.clear().user("Resume from handoff-x.md")
    assert gemini_context(chat.write(path)) is None  # cleared, no response yet
    assert not gemini_started(path, "handoff-x.md")
    chat.gemini(300)
    assert gemini_started(chat.write(path), "handoff-x.md")
    assert gemini_context(path) == (300, MODEL, chat.lines[-1]["id"], 2)


def test_only_the_window_after_the_clear_can_start_from_the_handoff(tmp_path: Path) -> None:
    # The window that wrote the file names it in the ask and in its write's result, both
    # answered; the clear's prompt is not in the file yet (a kill after the clear, or a
    # request the CLI failed before recording it): no session has started from it.
    name = "handoff-x.md"
    chat = SessionFile().user("hi").gemini(700_000)
    chat.user(f"Hand off now: write {name}").gemini(705_000)
    chat.call("write_file", {"file_path": name}, f"Successfully wrote to {name}")
    chat.gemini(706_000)
    path = chat.write(tmp_path / "s.jsonl")
    assert gemini_started(path, name)  # by itself, a prompt naming it then a response
    chat.clear()  # but only the window after the clear is searched
    assert not gemini_started(chat.write(path), name)
    chat.user(f"Resume from {name}")
    assert not gemini_started(chat.write(path), name)
    # a read of the file answered after the prompt: started, whatever the result says
    chat.call("read_file", {"file_path": name}, f"The content of {name}", tokens=900)
    assert gemini_started(chat.write(path), name)


def test_below_the_slider_nothing_is_said(project: Path) -> None:
    chat = SessionFile().user("hi").gemini(TARGET - 1).write(project.parent / "s.jsonl")
    assert after(project, chat) is None


def test_manual_tells_the_person_once_and_the_model_at_the_next_prompt(project: Path) -> None:
    chat = SessionFile().user("hi").gemini(TARGET + 1).write(project.parent / "s.jsonl")
    said = after(project, chat)
    assert list(said) == ["systemMessage"]
    assert "Type handoff" in said["systemMessage"]
    assert after(project, chat) is None  # once per window
    note = before(project, chat, "go on")
    assert "handoff slider" in note["hookSpecificOutput"]["additionalContext"]
    assert before(project, chat, "next") is None  # the note once


def test_handoff_typed_asks_for_the_file_then_the_turn_end_clears(project: Path) -> None:
    session = SessionFile().user("hi").gemini(TARGET + 1)
    chat = session.write(project.parent / "s.jsonl")
    before(project, chat, "start")  # the session's first prompt
    asked = before(project, chat, "handoff")
    text = asked["hookSpecificOutput"]["additionalContext"]
    assert "Hand off now" in text
    (reserved,) = [line.split()[-1] for line in text.splitlines() if line.startswith("    /")]
    Path(reserved).write_text("# Handoff\n\n## Next step\nRun the tests.\n")
    session.user(f"handoff <hook_context>{text}</hook_context>").gemini(TARGET + 2).write(chat)
    cleared = after(project, chat)
    assert cleared["decision"] == "deny"
    assert cleared["hookSpecificOutput"] == {"hookEventName": "AfterAgent", "clearContext": True}
    assert "Run the tests." in cleared["reason"]
    assert "systemMessage" in cleared
    (path,) = list_handoffs(project)
    assert not consumed(project, path.name)
    # A kill -9 before the CLI cleared, or after it before it recorded the prompt: the
    # file holds only the window that wrote the handoff (its ask names it, answered), and
    # any host's next start settles first. Nothing has started from it.
    settle(project)
    assert not consumed(project, path.name)
    session.clear().write(chat)
    settle(project)
    assert not consumed(project, path.name)
    session.user(cleared["reason"]).gemini(900).write(chat)
    assert after(project, chat) is None  # a small context now
    assert consumed(project, path.name)


def test_auto_asks_once_in_the_same_turn(project: Path) -> None:
    set_values("project", project, mode="auto")
    assert load(project).mode == "auto"
    chat = SessionFile().user("hi").gemini(TARGET + 1).write(project.parent / "s.jsonl")
    asked = after(project, chat)
    assert asked["decision"] == "deny"
    assert "hookSpecificOutput" not in asked  # continue, not clear
    assert "Hand off now" in asked["reason"]
    assert after(project, chat) is None  # no file written: not asked again in this window


def test_a_clear_into_a_new_session_file_still_uses_up_the_handoff(project: Path) -> None:
    # The CLI names a session file by the minute: a clear in a later minute continues the
    # same session in a new file, whose first window is the one given the handoff.
    session = SessionFile().user("hi").gemini(TARGET + 1)
    chat = session.write(project.parent / "session-06-02.jsonl")
    asked = before(project, chat, "handoff")
    text = asked["hookSpecificOutput"]["additionalContext"]
    (reserved,) = [line.split()[-1] for line in text.splitlines() if line.startswith("    /")]
    Path(reserved).write_text("# Handoff\n\n## Next step\nRun the tests.\n")
    session.user(f"handoff <hook_context>{text}</hook_context>").gemini(TARGET + 2).write(chat)
    cleared = after(project, chat)
    assert cleared["hookSpecificOutput"]["clearContext"] is True
    (path,) = list_handoffs(project)
    moved = SessionFile().user(cleared["reason"]).gemini(900)
    later = moved.write(project.parent / "session-06-03.jsonl")
    settle(project)  # read in the file it was given in: nothing after the clear there
    assert not consumed(project, path.name)
    assert after(project, later) is None
    assert consumed(project, path.name)


def test_a_fresh_session_is_offered_the_handoff_until_one_started_from_it(project: Path) -> None:
    folder = project / ".ctxrelay" / "handoff"
    folder.mkdir(parents=True)
    (folder / "handoff-20261203T060000Z.md").write_text("# Handoff\n\n## Next step\nGo.\n")
    # BeforeAgent runs before the CLI records the prompt (with the hook's context in it)
    chat = SessionFile("s-2").write(project.parent / "s2.jsonl")
    offered = before(project, chat, "hi", session="s-2")
    assert "handoff-20261203T060000Z.md" in offered["hookSpecificOutput"]["additionalContext"]
    SessionFile("s-2").user("hi handoff-20261203T060000Z.md").write(chat)  # then died
    fresh = SessionFile("s-3")
    chat = fresh.write(project.parent / "s3.jsonl")
    again = before(project, chat, "hi", session="s-3")
    assert "handoff-20261203T060000Z.md" in again["hookSpecificOutput"]["additionalContext"]
    fresh.user("hi handoff-20261203T060000Z.md").gemini(800).write(chat)
    after(project, chat, session="s-3")
    assert consumed(project, "handoff-20261203T060000Z.md")
    assert before(project, chat, "hi", session="s-4") is None


def test_a_sessions_first_prompt_records_what_the_cli_process_runs(project: Path) -> None:
    # session_history's server, a child of the same CLI process, asks for it
    chat = SessionFile("s-5").user("hi").write(project.parent / "s5.jsonl")
    before(project, chat, "hi", session="s-5")
    now = chain.current("gemini", chain.host_process())
    assert now == chain.ChainLink("gemini", "s-5", str(chat))
    assert chain.current_project("gemini", chain.host_process()) == str(project.resolve())
    before(project, chat, "hi", session="s-6")  # /clear: a new session id
    assert chain.current("gemini", chain.host_process()) == chain.ChainLink(
        "gemini", "s-6", str(chat)
    )


def test_the_handoff_continue_names_is_the_one_given(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = project / ".ctxrelay" / "handoff"
    folder.mkdir(parents=True)
    older = folder / "handoff-20261203T050000Z.md"
    older.write_text("# Handoff\n\n## Next step\nOlder.\n")
    (folder / "handoff-20261203T060000Z.md").write_text("# Handoff\n\n## Next step\nNewer.\n")
    monkeypatch.setenv(RESUME_ENV, str(older))
    chat = SessionFile("s-7").user("continue").write(project.parent / "s7.jsonl")
    given = before(project, chat, "continue", session="s-7")
    assert older.name in given["hookSpecificOutput"]["additionalContext"]
