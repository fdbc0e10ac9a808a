"""``ctxrelay sessions``: list, show (the JSON contract), history, reset, on both backends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.cli import main
from ctxrelay.store import NewRow, open_store


def _seed(target: str) -> str:
    store = open_store(target)
    try:
        session = store.create_session(metadata={"model": "scripted"})
        window = store.current_window(session.id)
        store.append(
            session.id,
            window.id,
            [
                NewRow("user", "fix the [bold]bug[/bold] in foo.py"),
                NewRow("assistant", None, {"tokens": 1200}),
            ],
        )
        store.append_advisory(
            session.id,
            window.id,
            "handoff",
            NewRow("warning", "hand off soon", {"handoff": True, "handoffTokens": 120000}),
        )
        store.rollover(
            session.id,
            window.id,
            "new_context",
            boundary=NewRow("boundary", None, {"reason": "new_context"}),
            opening=[NewRow("lead_in", "window 2 after 1"), NewRow("user", "go on")],
        )
        return session.id
    finally:
        store.close()


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> object:
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return json.loads(out)


def test_show_json_is_the_design_contract(
    store_target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    sid = _seed(store_target)
    got = _json(capsys, ["sessions", "show", sid, "--db", store_target, "--json"])
    assert isinstance(got, dict)
    assert set(got) == {"session_id", "windows"}
    assert got["session_id"] == sid
    first, second = got["windows"]
    assert set(first) == {"index", "id", "seal_reason", "rows"}
    assert (first["index"], first["seal_reason"]) == (1, "new_context")
    assert (second["index"], second["seal_reason"]) == (2, None)
    assert first["rows"] == [
        {"kind": "user", "metadata": {}, "text": "fix the [bold]bug[/bold] in foo.py"},
        {"kind": "assistant", "metadata": {"tokens": 1200}},  # no text key when None
        {
            "kind": "warning",
            "metadata": {"handoff": True, "handoffTokens": 120000},
            "text": "hand off soon",
        },
        {"kind": "boundary", "metadata": {"reason": "new_context"}},
    ]
    assert [r["kind"] for r in second["rows"]] == ["lead_in", "user"]


def test_list_history_and_reset(store_target: str, capsys: pytest.CaptureFixture[str]) -> None:
    sid = _seed(store_target)
    listed = _json(capsys, ["sessions", "list", "--db", store_target, "--json"])
    assert isinstance(listed, dict)
    (entry,) = listed["sessions"]
    assert entry["session_id"] == sid
    assert (entry["windows"], entry["current_window"], entry["status"]) == (2, 2, "running")

    hits = _json(
        capsys,
        ["sessions", "history", sid[:8], "--db", store_target, "--search", "FOO.PY", "--json"],
    )
    assert isinstance(hits, dict)
    assert [(h["window"], h["kind"]) for h in hits["hits"]] == [(1, "user")]
    read = _json(
        capsys, ["sessions", "history", sid, "--db", store_target, "--window", "2", "--json"]
    )
    assert isinstance(read, dict)
    assert [r["text"] for r in read["rows"]] == ["window 2 after 1", "go on"]

    reset = _json(capsys, ["sessions", "reset", sid, "--db", store_target, "--json"])
    assert isinstance(reset, dict)
    assert reset["window"]["index"] == 3
    visible = _json(capsys, ["sessions", "history", sid, "--db", store_target, "--json"])
    assert isinstance(visible, dict)
    assert [w["index"] for w in visible["windows"]] == [3]
    assert main(["sessions", "history", sid, "--db", store_target, "--search", "foo"]) == 0
    assert "No match" in capsys.readouterr().out
    # The host's view still has everything.
    shown = _json(capsys, ["sessions", "show", sid, "--db", store_target, "--json"])
    assert isinstance(shown, dict)
    assert [w["seal_reason"] for w in shown["windows"]] == ["new_context", "manual_reset", None]


def test_history_with_a_tool_call_only_response(
    store_target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    store = open_store(store_target)
    try:
        session = store.create_session()
        window = store.current_window(session.id)
        store.append(
            session.id,
            window.id,
            [NewRow("user", "read foo.py"), NewRow("assistant", "", {"tool_calls": 1})],
        )
    finally:
        store.close()
    sid = session.id
    hits = _json(
        capsys, ["sessions", "history", sid, "--db", store_target, "--search", "foo", "--json"]
    )
    assert isinstance(hits, dict)
    assert [h["kind"] for h in hits["hits"]] == ["user"]
    read = _json(
        capsys, ["sessions", "history", sid, "--db", store_target, "--window", "1", "--json"]
    )
    assert isinstance(read, dict)
    assert [r["text"] for r in read["rows"]] == ["read foo.py", ""]
    for flag, value in (("--search", "foo"), ("--window", "1")):
        assert main(["sessions", "history", sid, "--db", store_target, flag, value]) == 0


def test_tables_for_people(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "s.db")
    sid = _seed(db)
    for argv in (
        ["sessions", "list", "--db", db],
        ["sessions", "show", sid, "--db", db],
        ["sessions", "history", sid, "--db", db],
        ["sessions", "history", sid, "--db", db, "--search", "[/bold]"],
        ["sessions", "history", sid, "--db", db, "--window", "1"],
    ):
        assert main(argv) == 0, argv
    out = capsys.readouterr().out
    assert sid in out
    assert "[bold]bug[/bold]" in out  # stored text is shown, not read as markup
    assert "new_context" in out


def test_errors_are_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "s.db"
    sid = _seed(str(db))
    cases = [
        (["sessions", "show", "no-such-session", "--db", str(db)], "no session"),
        (["sessions", "history", sid, "--db", str(db), "--window", "9"], "window 9"),
        (["sessions", "list", "--db", str(tmp_path / "missing.db")], "no ctxrelay store"),
        (["sessions", "list", "--db", "mysql://x"], "unsupported store URL"),
    ]
    for argv, needle in cases:
        assert main(argv) == 1, argv
        out, err = capsys.readouterr()
        assert out == ""
        assert needle in err
        assert err.count("\n") == 1
    assert not (tmp_path / "missing.db").exists()
    assert main(["sessions", "history", sid, "--db", str(db), "--search", "a", "--window", "1"])
    assert "either --search or --window" in capsys.readouterr().err


def test_reset_waits_for_a_running_dispatch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "s.db")
    sid = _seed(db)
    store = open_store(db)
    try:
        with store.dispatch_lock(sid):
            assert main(["sessions", "reset", sid, "--db", db, "--wait", "0.1"]) == 1
            assert "is in use by pid" in capsys.readouterr().err
        assert len(store.windows(sid)) == 2
    finally:
        store.close()


def test_help_teaches(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions", "--help"]) == 0
    out = capsys.readouterr().out
    assert "Examples:" in out
    assert "postgresql://" in out


@pytest.mark.parametrize("action", ["list", "show", "history", "reset"])
def test_each_action_help_teaches(capsys: pytest.CaptureFixture[str], action: str) -> None:
    assert main(["sessions", action, "--help"]) == 0
    out = capsys.readouterr().out
    assert "Examples:" in out
    assert f"ctxrelay sessions {action} " in out.split("Examples:")[1]


def test_list_before_the_first_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CTXRELAY_DB", str(tmp_path / "fresh" / "ctxrelay.db"))
    assert main(["sessions", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"sessions": []}
    assert main(["sessions", "list"]) == 0
    assert "No sessions yet" in capsys.readouterr().out
    assert not (tmp_path / "fresh").exists()
    # The environment's store is used when there is one.
    sid = _seed(str(tmp_path / "fresh" / "ctxrelay.db"))
    listed = _json(capsys, ["sessions", "list", "--json"])
    assert isinstance(listed, dict)
    assert [s["session_id"] for s in listed["sessions"]] == [sid]


def test_search_is_history_search(store_target: str, capsys: pytest.CaptureFixture[str]) -> None:
    sid = _seed(store_target)
    db = ["--db", store_target, "--json"]
    searched = _json(capsys, ["sessions", "search", sid[:8], "FOO.PY", *db])
    assert searched == _json(capsys, ["sessions", "history", sid, "--search", "FOO.PY", *db])
    assert isinstance(searched, dict)
    assert [(h["window"], h["kind"]) for h in searched["hits"]] == [(1, "user")]
    assert main(["sessions", "search", sid[:8], "go on", "--db", store_target]) == 0
    out = capsys.readouterr().out
    assert "matches for 'go on'" in out
    assert "go on" in out.split("excerpt", 1)[1]
