"""``ctxrelay demo``: the real runtime on a real store, deterministic, no API key."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.cli import main as ctxrelay
from ctxrelay.cli._demo_session import DEMO_PRICED_AS
from ctxrelay.pricing import DEFAULT_PRICES
from ctxrelay.store import open_store

demo = importlib.import_module("ctxrelay.cli.demo")


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> list[dict[str, Any]]:
    code = demo.main(
        ["--json", "--db", str(tmp_path / f"{name}.db"), "--workspace", str(tmp_path / name)]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def test_demo_crosses_every_stage_and_is_deterministic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _run(tmp_path, capsys, "one")
    second = _run(tmp_path, capsys, "two")

    def shape(events: list[dict[str, Any]]) -> list[Any]:
        return [
            (e["window"], e["tokens"], e["decision"], e["stage"])
            for e in events
            if e["event"] == "dispatch"
        ]

    assert shape(first) == shape(second)
    decisions = [(w, d, s) for w, _, d, s in shape(first)]
    assert decisions.count((1, "warn", "warning")) == 1
    assert decisions.count((1, "warn", "handoff")) == 1
    assert (2, "rollover", None) in decisions
    rollovers = [e for e in first if e["event"] == "rollover"]
    assert [(e["from_window"], e["reason"]) for e in rollovers] == [
        (1, "new_context"),
        (2, "forced"),
    ]
    assert all(e["notes_bytes"] for e in rollovers)
    tools = [e["name"] for e in first if e["event"] == "tool"]
    assert "session_history" in tools
    end = first[-1]
    assert (end["event"], end["status"], end["windows"]) == ("end", "done", 3)
    store = open_store(tmp_path / "one.db")
    try:
        seals = [w.seal_reason for w in store.windows(end["session_id"])]
        assert seals == ["new_context", "forced", None]
        received = [r for r in store.rows(end["session_id"]) if r.kind == "assistant"]
        usable = 168_000
        assert all(int(r.metadata["estimated_tokens"]) <= usable for r in received)
    finally:
        store.close()
    notes = (tmp_path / "one" / "context-notes.md").read_text()
    assert "Status: complete." in notes


def test_demo_prices_the_handoff_against_one_window(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    end = _run(tmp_path, capsys, "priced")[-1]
    assert end["priced_as"] == DEMO_PRICED_AS
    assert DEFAULT_PRICES.lookup(end["priced_as"]) is not None
    assert 0 < end["cost_usd"] < end["cost_without_handoff_usd"]
    # Handoff keeps every window under the usable limit; one window grows to it.
    assert end["peak_context_tokens"] < end["peak_context_without_handoff_tokens"] == 168_000
    store = open_store(tmp_path / "priced.db")
    try:
        recorded = store.get_session(end["session_id"]).metadata
    finally:
        store.close()
    # The runtime's accounting and the analyzer price the same usage the same way.
    assert end["cost_usd"] == pytest.approx(recorded["cost_usd"], abs=1e-6)
    usage = recorded["usage"]
    assert usage["cache_read_input_tokens"] > usage["cache_creation_input_tokens"] > 0


def test_ctxrelay_analyze_agrees_with_the_demo_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    end = _run(tmp_path, capsys, "agree")[-1]
    prices = DEFAULT_PRICES.lookup(DEMO_PRICED_AS)
    assert prices is not None
    price_file = tmp_path / "prices.json"
    fields = ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read")
    price_file.write_text(json.dumps({"scripted": {f: getattr(prices, f) for f in fields}}))
    code = ctxrelay(
        ["analyze", "--db", str(tmp_path / "agree.db"), "--prices", str(price_file), "--json"]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    (session,) = json.loads(out)["sessions"]
    assert session["cost_usd"] == pytest.approx(end["cost_usd"], abs=1e-6)
    assert session["peak_context_tokens"] == end["peak_context_tokens"]


def test_demo_tells_where_the_session_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = tmp_path / "w[bold]"  # a path is text, not rich markup
    code = demo.main(["--db", str(tmp_path / "d.db"), "--workspace", str(workspace)])
    out = capsys.readouterr().out
    assert code == 0
    assert str(workspace) in "".join(out.split("\n"))
    assert "ctxrelay sessions show" in out
    assert "warn (handoff)" in out
    assert "rollover (forced)" in out
    assert "priced as Claude Sonnet 4.6" in out
    assert "handoff saved" in out


def test_demo_refuses_a_non_empty_workspace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "keep.txt").write_text("mine")
    code = demo.main(["--db", str(tmp_path / "d.db"), "--workspace", str(tmp_path / "w")])
    assert code == 1
    assert "must be empty" in capsys.readouterr().err
    assert (tmp_path / "w" / "keep.txt").read_text() == "mine"
