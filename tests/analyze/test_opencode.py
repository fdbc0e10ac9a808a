"""``ctxrelay analyze`` on OpenCode databases: each OpenCode session a report, each step
priced at its own model, OpenCode's recorded cost beside ctxrelay's, the replays, the
reports by project, the default database, and what it skips."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

import pytest

from ctxrelay.analyze import analyze_paths, report_json
from ctxrelay.cli import main
from ctxrelay.pricing import DEFAULT_PRICES, cost
from ctxrelay.transcripts import Usage
from ctxrelay.transcripts._opencode import NOT_OPENCODE
from tests.analyze._ccusage import opencode_sessions, token_counts
from tests.transcripts._lines import assistant as claude_line
from tests.transcripts._lines import write
from tests.transcripts._opencode_db import add_message, add_session, assistant, create, tokens

if TYPE_CHECKING:
    from pathlib import Path

T0 = 1_796_000_000_000  # ms


def _database(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "opencode.db"
    with create(db) as c:
        add_session(c, "ses_app", "/home/u/app", T0)
        steps = [
            ("claude-sonnet-4-5", tokens(1000, 20, read=4000, reasoning=5), 0.5),
            ("gpt-5.5", tokens(200, 9, read=6000, write=50), 0.25),
        ]
        for k, (model, usage, recorded) in enumerate(steps):
            data = assistant(T0 + k, usage, model=model, cost=recorded)
            add_message(c, f"msg_app{k}", "ses_app", data, T0 + k)
        add_session(c, "ses_lib", "/home/u/lib", T0 + 100)
        add_message(c, "msg_lib", "ses_lib", assistant(T0 + 101, tokens(300, 7)), T0 + 101)
        add_session(c, "ses_idle", "/home/u/lib", T0 + 200)  # never sent a request
    return db


def _priced(model: str, usage: Usage) -> float:
    prices = DEFAULT_PRICES.lookup(model)
    assert prices is not None, model
    return cost(usage, prices)


def test_each_session_priced_per_model_beside_opencodes_cost(tmp_path: Path) -> None:
    db = _database(tmp_path)
    doc = report_json(analyze_paths([db]))
    app, lib = doc["sessions"]
    assert (app["session_id"], app["format"], app["project"], app["path"]) == (
        "ses_app",
        "opencode",
        "/home/u/app",
        str(db),
    )
    assert app["requests"] == 2
    assert app["cost_usd"] == pytest.approx(
        _priced("claude-sonnet-4-5", Usage(1000, 0, 4000, 25))
        + _priced("gpt-5.5", Usage(200, 50, 6000, 9)),
        abs=1e-6,
    )
    assert app["recorded_cost_usd"] == 0.75
    assert app["peak_context_tokens"] == 6250
    assert [p["policy"] for p in app["whatif"]["policies"]] == ["none", "compact", "handoff:60"]
    assert (lib["session_id"], lib["project"], lib["recorded_cost_usd"]) == (
        "ses_lib",
        "/home/u/lib",
        0.0,
    )
    assert doc["totals"]["sessions"] == 2  # the idle session sent nothing


def test_by_project_and_beside_claude_code_transcripts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _database(tmp_path / "share" / "opencode")
    (tmp_path / "projects" / "-home-me-app").mkdir(parents=True)
    write(
        tmp_path / "projects" / "-home-me-app" / "s1.jsonl",
        [claude_line("m1", input_tokens=1000, output=10)],
    )
    assert main(["analyze", "--json", str(tmp_path)]) == 0  # a folder search finds both
    doc = json.loads(capsys.readouterr().out)
    assert sorted(s["format"] for s in doc["sessions"]) == ["claude", "opencode", "opencode"]
    assert main(["analyze", "--by", "project", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "/home/u/app" in out
    assert "/home/u/lib" in out
    assert main(["analyze", str(tmp_path / "share")]) == 0
    out = " ".join(capsys.readouterr().out.split())  # as wrapped at the terminal's width
    assert "OpenCode recorded $0.75 for its 2 sessions (ctxrelay's prices: $" in out


def test_the_default_database_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _database(tmp_path / "data" / "opencode")
    monkeypatch.delenv("OPENCODE_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "no-claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "no-codex"))
    assert main(["analyze", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["session_id"] for s in doc["sessions"]] == ["ses_app", "ses_lib"]


def test_a_database_that_cannot_be_read_is_skipped_with_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _database(tmp_path / "good")
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as c:
        c.execute("CREATE TABLE notes (id integer)")
    assert main(["analyze", "--json", str(good), str(other)]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["skipped"] == [{"path": str(other), "reason": NOT_OPENCODE}]
    assert len(doc["sessions"]) == 2
    assert f"skipped {other}: {NOT_OPENCODE}" in captured.err


def test_ccusage_counts_the_same_tokens_but_reasoning(tmp_path: Path) -> None:
    # ccusage 20.0.24's opencode report on the same database: the same sessions and
    # tokens, but its output leaves reasoning out (billed as output, so ctxrelay adds
    # it); its cost is OpenCode's recorded one, or its own price where that is 0.
    db = _database(tmp_path / "opencode")
    theirs = opencode_sessions(db.parent)
    ours = {s["session_id"]: s for s in report_json(analyze_paths([db]))["sessions"]}
    assert set(theirs) == set(ours)
    reasoning = {"ses_app": 5, "ses_lib": 0}
    for session_id, c in theirs.items():
        mine, its = token_counts(ours[session_id], c)
        assert [*mine[:3], mine[3] - reasoning[session_id]] == its, session_id
    assert theirs["ses_app"]["totalCost"] == ours["ses_app"]["recorded_cost_usd"]
    assert theirs["ses_lib"]["totalCost"] == pytest.approx(ours["ses_lib"]["cost_usd"], abs=1e-6)
