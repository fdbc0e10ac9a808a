"""The OpenCode database reader on databases the tests write with OpenCode's own schema
(the real OpenCode's database is read in ``tests/e2e/test_opencode_analyze.py``)."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

import pytest

from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts import Usage, _opencode, default_opencode_db, read_opencode
from ctxrelay.transcripts._opencode import NOT_OPENCODE
from tests.transcripts._opencode_db import add_message, add_session, assistant, create, tokens, user

if TYPE_CHECKING:
    from pathlib import Path

T0 = 1_796_000_000_000  # ms


def _database(path: Path) -> Path:
    db = path / "opencode.db"
    with create(db) as c:
        add_session(c, "ses_a", "/home/u/app", T0)
        add_message(c, "msg_a1", "ses_a", user(T0), T0)
        add_message(
            c,
            "msg_a2",
            "ses_a",
            assistant(T0 + 1, tokens(1000, 20, read=4000, reasoning=5), cost=0.01),
            T0 + 1,
        )
        # an aborted step: every count zero, nothing billed
        add_message(c, "msg_a3", "ses_a", assistant(T0 + 2, tokens(0, 0)), T0 + 2)
        add_message(
            c,
            "msg_a4",
            "ses_a",
            assistant(T0 + 3, tokens(200, 9, read=6000, write=50), model="gpt-5.5", cost=0.02),
            T0 + 3,
        )
        add_message(
            c,
            "msg_a5",
            "ses_a",
            assistant(T0 + 4, tokens(7000, 300), cost=0.03, summary=True),
            T0 + 4,
        )
        add_message(c, "msg_a6", "ses_a", assistant(T0 + 5, tokens(800, 10)), T0 + 5)
        add_message(c, "msg_a7", "ses_a", "{not json", T0 + 6)
        add_session(c, "ses_b", "/home/u/app", T0 + 10, parent="ses_a")
        add_message(c, "msg_b1", "ses_b", assistant(T0 + 11, tokens(50, 5)), T0 + 11)
        add_session(c, "ses_empty", "/home/u/lib", T0 + 20)
    return db


def test_each_session_its_assistant_steps_and_compactions(tmp_path: Path) -> None:
    db = _database(tmp_path)
    a, b, empty = read_opencode(db)
    t = a.transcript
    assert (t.session_id, t.format, t.cwd, t.parent_id, t.version, t.path) == (
        "ses_a",
        "opencode",
        "/home/u/app",
        None,
        "1.18.33",
        str(db),
    )
    assert [r.message_id for r in t.responses] == ["msg_a2", "msg_a4", "msg_a6"]
    # reasoning is billed as output; input is the uncached part, as OpenCode counts it
    assert t.responses[0].usage == Usage(1000, 0, 4000, 25)
    assert t.responses[1].usage == Usage(200, 50, 6000, 9)
    assert t.responses[1].model == "gpt-5.5"
    assert t.responses[0].timestamp == "2026-11-30T00:53:20.001Z"
    assert t.models == ("claude-sonnet-4-5", "gpt-5.5")
    # the summary is the compaction's request, and the chain restarts after it
    (compaction,) = t.compactions
    assert (compaction.after_requests, compaction.pre_tokens) == (2, 6250)
    assert [[r.message_id for r in group] for group in a.summaries] == [["msg_a5"]]
    assert [r.segment for r in t.responses] == [0, 0, 1]
    assert t.recorded_cost_usd == pytest.approx(0.06)
    assert (b.transcript.parent_id, b.transcript.requests) == ("ses_a", 1)
    assert b.transcript.recorded_cost_usd == 0.0
    assert (empty.transcript.requests, empty.transcript.recorded_cost_usd) == (0, None)


def test_read_while_a_writer_holds_its_transaction(tmp_path: Path) -> None:
    # OpenCode keeps the database in WAL mode and writes it as it runs: a read sees the
    # last commit and neither waits for the writer nor changes the file.
    db = _database(tmp_path)
    writer = sqlite3.connect(db, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        add_message(writer, "msg_a8", "ses_a", assistant(T0 + 7, tokens(9, 9)), T0 + 7)
        before = db.read_bytes()
        assert [r.message_id for r in read_opencode(db)[0].transcript.responses][-1] == "msg_a6"
        assert db.read_bytes() == before
        writer.execute("COMMIT")
    finally:
        writer.close()
    assert read_opencode(db)[0].transcript.responses[-1].message_id == "msg_a8"


def test_a_database_that_is_not_opencodes_is_refused_with_its_reason(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as c:
        c.execute("CREATE TABLE notes (id integer)")
    with pytest.raises(TranscriptError) as caught:
        read_opencode(other)
    assert caught.value.reason == NOT_OPENCODE
    text = tmp_path / "text.db"
    text.write_text("just text, not SQLite\n" * 10)
    with pytest.raises(TranscriptError, match="OpenCode's database: file is not a database"):
        read_opencode(text)
    with pytest.raises(TranscriptError, match="no such file"):
        read_opencode(tmp_path / "gone.db")


def test_a_locked_database_is_refused_not_waited_on_forever(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_opencode, "LOCK_WAIT_S", 0.0)  # the lock is held throughout
    db = tmp_path / "opencode.db"
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.executescript("PRAGMA locking_mode=EXCLUSIVE; CREATE TABLE x (y); BEGIN EXCLUSIVE;")
        with pytest.raises(TranscriptError, match="database is locked"):
            read_opencode(db)
    finally:
        holder.close()


def test_the_default_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENCODE_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_opencode_db() == str(tmp_path / "opencode" / "opencode.db")
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_opencode_db() == str(tmp_path / "home" / ".local/share/opencode/opencode.db")
    monkeypatch.setenv("OPENCODE_DB", str(tmp_path / "elsewhere.db"))
    assert default_opencode_db() == str(tmp_path / "elsewhere.db")


def test_a_time_out_of_range_is_no_time(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    with create(db) as c:
        add_session(c, "ses_a", "/home/u/app", T0)
        add_message(c, "msg_a1", "ses_a", assistant(10**20, tokens(5, 5)), 10**15)
    (session,) = read_opencode(db)
    (response,) = session.transcript.responses
    assert response.timestamp is None
