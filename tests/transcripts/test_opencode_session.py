"""One OpenCode session read off a database the test writes with OpenCode's own schema:
whether it started from a handoff file, its conversation (the real
OpenCode's database is read in ``tests/e2e/test_opencode_handoff.py``)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from typing import TYPE_CHECKING

from ctxrelay.hooks import chain
from ctxrelay.transcripts import (
    READERS,
    STARTED_RULES,
    Message,
    conversation_of,
    opencode_conversation,
    opencode_started,
    session_locator,
    split_locator,
    started,
    windows_of,
)
from tests.transcripts._opencode_db import (
    add_message,
    add_part,
    add_session,
    assistant,
    create,
    tokens,
    user,
)

if TYPE_CHECKING:
    from pathlib import Path

T0 = 1_796_000_000_000  # ms
HANDOFF = "handoff-20261203T101500Z.md"


def _session(db: Path, session_id: str = "ses_b", *, answered: bool = True) -> str:
    """A session given the handoff as its first prompt, that ran a tool and (``answered``)
    replied; returns its locator."""
    with create(db) if not db.exists() else _open(db) as c:
        add_session(c, session_id, "/home/u/app", T0)
        add_message(c, f"{session_id}_m1", session_id, user(T0), T0)
        add_part(
            c,
            f"{session_id}_p1",
            f"{session_id}_m1",
            session_id,
            {"type": "text", "text": f"[ctxrelay] Resume from .ctxrelay/handoff/{HANDOFF}"},
            created_ms=T0,
        )
        usage = tokens(900, 20, read=3000) if answered else tokens(0, 0)
        add_message(c, f"{session_id}_m2", session_id, assistant(T0 + 1, usage), T0 + 1)
        add_part(
            c,
            f"{session_id}_p2",
            f"{session_id}_m2",
            session_id,
            {"type": "step-start"},
            created_ms=T0,
        )
        if answered:
            add_part(
                c,
                f"{session_id}_p3",
                f"{session_id}_m2",
                session_id,
                {"type": "reasoning", "text": "thinking it over"},
                created_ms=T0 + 1,
            )
            add_part(
                c,
                f"{session_id}_p4",
                f"{session_id}_m2",
                session_id,
                {
                    "type": "tool",
                    "tool": "bash",
                    "callID": "call_1",
                    "state": {
                        "status": "completed",
                        "input": {"command": "pytest -q"},
                        "output": "3 passed",
                    },
                },
                created_ms=T0 + 1,
            )
        if answered:
            add_message(
                c,
                f"{session_id}_m3",
                session_id,
                assistant(T0 + 2, tokens(200, 9, read=4000, write=30)),
                T0 + 2,
            )
            add_part(
                c,
                f"{session_id}_p5",
                f"{session_id}_m3",
                session_id,
                {
                    "type": "tool",
                    "tool": "read",
                    "callID": "call_2",
                    "state": {"status": "error", "input": {"filePath": "x"}, "error": "no x"},
                },
                created_ms=T0 + 2,
            )
            add_part(
                c,
                f"{session_id}_p6",
                f"{session_id}_m3",
                session_id,
                {"type": "text", "text": "The tests pass."},
                created_ms=T0 + 2,
            )
    return session_locator(db, session_id)


def _open(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(db, isolation_level=None)


def test_the_locator_names_the_database_and_the_session(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    locator = session_locator(db, "ses_x")
    assert locator == f"{db}#ses_x"
    assert split_locator(locator) == (str(db), "ses_x")
    assert split_locator(str(db)) is None  # a bare path names no session


def test_nothing_is_read_from_what_is_not_a_session(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    _session(db)
    assert list(opencode_conversation(session_locator(db, "ses_none"))) == []
    assert list(opencode_conversation(session_locator(tmp_path / "missing.db", "ses_b"))) == []
    assert list(opencode_conversation(str(db))) == []
    (tmp_path / "garbage.db").write_bytes(b"not sqlite at all" * 100)
    assert list(opencode_conversation(session_locator(tmp_path / "garbage.db", "ses_b"))) == []
    assert not opencode_started(session_locator(tmp_path / "missing.db", "ses_b"), tmp_path)


def test_started_once_a_response_follows_the_prompt_naming_the_file(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    handoff = tmp_path / HANDOFF
    waiting = _session(db, "ses_w", answered=False)
    assert not opencode_started(waiting, handoff)  # killed before its first response
    done = _session(db, "ses_d")
    assert opencode_started(done, handoff)
    assert STARTED_RULES["opencode"](done, handoff, None)
    assert started("opencode", done, handoff)
    assert not started("opencode", done, tmp_path / "handoff-20261203T111111Z.md")


def test_a_first_step_still_running_its_tool_call_has_started(tmp_path: Path) -> None:
    # session_history called in the fresh session's first step: its counts are still zero
    db = tmp_path / "opencode.db"
    with create(db) as c:
        add_session(c, "ses_a", "/home/u/app", T0)
        add_message(c, "m1", "ses_a", user(T0), T0)
        add_part(c, "p1", "m1", "ses_a", {"type": "text", "text": HANDOFF}, created_ms=T0)
        add_message(c, "m2", "ses_a", assistant(T0 + 1, tokens(0, 0)), T0 + 1)
        add_part(c, "p2", "m2", "ses_a", {"type": "step-start"}, created_ms=T0 + 1)
    locator = session_locator(db, "ses_a")
    assert not opencode_started(locator, tmp_path / HANDOFF)
    with _open(db) as c:
        state = {"status": "running", "input": {"action": "list"}}
        call = {"type": "tool", "tool": "ctxrelay_session_history", "state": state}
        add_part(c, "p3", "m2", "ses_a", call, created_ms=T0 + 1)
    assert opencode_started(locator, tmp_path / HANDOFF)


def test_a_file_named_only_in_a_reply_is_not_a_start(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    with create(db) as c:
        add_session(c, "ses_a", "/home/u/app", T0)
        add_message(c, "m1", "ses_a", user(T0), T0)
        add_part(c, "p1", "m1", "ses_a", {"type": "text", "text": "go on"}, created_ms=T0)
        add_message(c, "m2", "ses_a", assistant(T0 + 1, tokens(900, 20)), T0 + 1)
        add_part(
            c,
            "p2",
            "m2",
            "ses_a",
            {"type": "text", "text": f"I wrote {HANDOFF}"},
            created_ms=T0 + 1,
        )
    assert not opencode_started(session_locator(db, "ses_a"), tmp_path / HANDOFF)


def test_the_conversation_is_the_prompts_replies_calls_and_results(tmp_path: Path) -> None:
    locator = _session(tmp_path / "opencode.db")
    assert list(opencode_conversation(locator)) == [
        Message("user", f"[ctxrelay] Resume from .ctxrelay/handoff/{HANDOFF}"),
        Message("tool_call", '{"command": "pytest -q"}', "bash", "call_1"),
        Message("tool_result", "3 passed", call_id="call_1"),
        Message("tool_call", '{"filePath": "x"}', "read", "call_2"),
        Message("tool_result", "no x", call_id="call_2", is_error=True),
        Message("assistant", "The tests pass."),
    ]
    assert READERS["opencode"] is opencode_conversation
    assert list(conversation_of("opencode", locator)) == list(opencode_conversation(locator))
    assert windows_of("opencode", locator) == [list(opencode_conversation(locator))]


def test_a_call_still_running_has_no_result(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    with create(db) as c:
        add_session(c, "ses_a", "/home/u/app", T0)
        add_message(c, "m1", "ses_a", assistant(T0, tokens(0, 0)), T0)
        state = {"status": "running", "input": {"command": "sleep 9"}}
        add_part(
            c, "p1", "m1", "ses_a", {"type": "tool", "tool": "bash", "state": state}, created_ms=T0
        )
    assert list(opencode_conversation(session_locator(db, "ses_a"))) == [
        Message("tool_call", '{"command": "sleep 9"}', "bash", "")
    ]


def test_the_agent_is_named_opencode() -> None:
    link = chain.ChainLink("opencode", "ses_a", "/x/opencode.db#ses_a")
    assert chain.describe(link) == "an OpenCode session (ses_a)"


def test_a_hook_that_settles_other_hosts_loads_no_sqlite() -> None:
    # The started rules load with every hook that settles; OpenCode's reader (and sqlite3)
    # only when an OpenCode session is asked about.
    code = (
        "import sys; from ctxrelay.transcripts import STARTED_RULES; "
        "print('sqlite3' in sys.modules, sorted(STARTED_RULES))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["False", "['claude',", "'codex',", "'gemini',", "'opencode']"]
