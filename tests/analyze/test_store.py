"""``--db``: ctxrelay's own sessions, read from a real store (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.analyze import analyze_store
from ctxrelay.cli import main
from ctxrelay.store import NewRow, open_store


def _assistant(context: int, read: int, output: int = 50) -> NewRow:
    # The runtime's assistant-row metadata (ctxrelay.runtime records these keys).
    usage = {
        "input_tokens": 10,
        "cache_creation_input_tokens": context - 10 - read,
        "cache_read_input_tokens": read,
        "output_tokens": output,
    }
    return NewRow(
        "assistant",
        "ok",
        {"usage": usage, "model": "claude-sonnet-4-5", "context_tokens": context},
    )


def _make(path: Path | str) -> str:
    store = open_store(path)
    try:
        info = store.create_session(
            metadata={"config": {"limit": 100_000, "output_reserve": 8_000, "threshold": 60}}
        )
        window = store.current_window(info.id)
        store.append(info.id, window.id, [NewRow("user", "go")])
        prev = 0
        for context in (20_000, 35_000, 50_000, 61_000):
            store.append(info.id, window.id, [_assistant(context, prev)])
            prev = context
        window = store.rollover(
            info.id,
            window.id,
            "new_context",
            boundary=NewRow("boundary", None, {}),
            opening=[NewRow("lead_in", "notes")],
        )
        store.append(info.id, window.id, [_assistant(22_000, 0), _assistant(30_000, 22_000)])
        return info.id
    finally:
        store.close()


def test_a_stored_session_is_read_as_a_chain(store_target: str) -> None:
    session_id = _make(store_target)
    (report,) = analyze_store(store_target)
    t = report.transcript
    assert t.session_id == session_id
    assert t.requests == 6
    assert t.context_curve == [20_000, 35_000, 50_000, 61_000, 22_000, 30_000]
    assert [r.segment for r in t.responses] == [0, 0, 0, 0, 1, 1]
    # The session's own budget is the replay's window.
    assert (report.assumptions.limit, report.assumptions.output_reserve) == (100_000, 8_000)
    none = report.replays[0]
    assert [r.usage for r in none.requests] == [r.usage for r in t.responses]
    assert [r.window for r in none.requests] == [1, 1, 1, 1, 2, 2]
    assert report.cost_usd is not None


def test_cli_db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "ctxrelay.db"
    session_id = _make(db)
    assert main(["analyze", "--db", str(db), "--json", "--session", session_id]) == 0
    (session,) = json.loads(capsys.readouterr().out)["sessions"]
    assert session["session_id"] == session_id
    assert session["requests"] == 6
    assert session["peak_context_tokens"] == 61_000
    assert main(["analyze", "--session", session_id]) == 1
    assert "--db" in capsys.readouterr().err
    missing = tmp_path / "missing.db"
    assert main(["analyze", "--db", str(missing)]) == 1
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not missing.exists()
    assert main(["analyze", "--db", str(db), "--session", "nope"]) == 1
    assert "nope" in capsys.readouterr().err


def test_a_url_password_is_never_shown() -> None:
    from ctxrelay.analyze._store import _shown

    assert (
        _shown("postgresql://me:s3cret@db.internal:5433/ctx")
        == "postgresql://me@db.internal:5433/ctx"
    )
    assert _shown("postgresql://db/ctx") == "postgresql://db/ctx"
    assert _shown("/tmp/x.db") == "/tmp/x.db"
