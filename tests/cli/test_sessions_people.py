"""``ctxrelay sessions show`` and ``list`` for people: a header, a timeline per window with
the advisories and seals called out, readable fields, lines that fit 80 columns."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ctxrelay.cli import main
from ctxrelay.cli._readable import fields, show_value
from ctxrelay.cli.sessions import SHOW_ONE


@pytest.fixture
def demo_db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    db = str(tmp_path / "demo.db")
    assert main(["demo", "--json", "--db", db, "--workspace", str(tmp_path / "w")]) == 0
    end = json.loads(capsys.readouterr().out.splitlines()[-1])
    return db, str(end["session_id"])


def _show(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["sessions", *argv]) == 0
    return capsys.readouterr().out.splitlines()


def test_show_is_a_header_and_a_timeline_per_window(
    demo_db: tuple[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    db, sid = demo_db
    lines = _show(capsys, "show", sid[:8], "--db", db)
    assert all(len(line) <= 80 for line in lines), [x for x in lines if len(x) > 80]
    text = "\n".join(lines)
    head = {line.split()[0]: line for line in lines[1:10] if line.startswith("  ")}
    assert set(head) >= {"task", "model", "status", "windows", "tokens", "cost", "budget"}
    assert "Add a --json flag" in head["task"]
    assert head["status"].split()[-1] == "done"
    assert "3 (sealed: handoff, forced)" in head["windows"]
    assert "$" in head["cost"]
    assert [x.split(" · ")[0] for x in lines if x.startswith("window ")] == [
        "window 1",
        "window 2",
        "window 3",
    ]
    assert "sealed by new_context at" in text
    assert "sealed by a forced rollover at" in text
    assert "handoff requested at 122,295 tokens" in text
    assert "advance warning at 100,624 tokens" in text
    assert "notes written: 474 bytes to context-notes.md" in text
    assert "sealed by new_context (the agent handed off)" in text
    model_rows = [x for x in lines if x.split()[1:2] == ["model"]]
    assert len(model_rows) == 25
    assert "6,200" in model_rows[0]
    assert "$0.0" in model_rows[0]
    assert "{'" not in text
    assert "'}" not in text


def test_verbose_shows_every_field_readably(
    demo_db: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, sid = demo_db
    text = "\n".join(_show(capsys, "show", sid, "--db", db, "--verbose"))
    for key in (
        "config.limit",
        "config.system",
        "usage.cache_read_input_tokens",
        "context_tokens",
        "estimated_tokens",
        "stop_reason",
        "previous_window_id",
        "handoffTokens",
    ):
        assert key in text, key
    assert "{'" not in text
    assert re.search(r"new_context +yes", text)


def test_json_is_the_contract(demo_db: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    db, sid = demo_db
    (line,) = _show(capsys, "show", sid, "--db", db, "--json")
    shown = json.loads(line)
    assert set(shown) == {"session_id", "windows"}
    assert [w["seal_reason"] for w in shown["windows"]] == ["new_context", "forced", None]
    assert shown["windows"][0]["rows"][1]["metadata"]["context_tokens"] == 6_200


def test_list_is_a_table_that_fits(
    demo_db: tuple[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    db, sid = demo_db
    lines = _show(capsys, "list", "--db", db)
    table = lines[: lines.index("")]
    # All of it fits but the command to copy, which the terminal wraps (never cut).
    assert all(len(line) <= 80 for line in lines[:-1]), lines
    assert db in "".join(table)  # the store's path folds, never cut
    head = next(i for i, line in enumerate(table) if line.startswith("session "))
    assert table[head].split()[:4] == ["session", "created", "status", "windows"]
    row = table[head + 1].split()
    assert row[0] == sid[:8]
    assert "done" in row
    assert "handoff," in row
    assert "Add" in row
    assert lines[-2] == SHOW_ONE
    assert lines[-1].endswith(f"sessions show {sid[:8]} --db {db}")


def test_values_read_as_written() -> None:
    assert show_value(None) == "-"
    assert show_value(True) == "yes"
    assert show_value(1_871_000) == "1,871,000"
    assert show_value(0.0419, "cost_usd") == "$0.0419"
    assert show_value([]) == "none"
    assert show_value(["a", 2]) == "a, 2"
    assert dict(fields({"usage": {"input_tokens": 5}, "x": {}})) == {
        "usage.input_tokens": "5",
        "x": "none",
    }
