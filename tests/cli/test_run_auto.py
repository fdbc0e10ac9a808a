"""``ctxrelay run --threshold auto``: the slider comes from the analyzer's sweep over the
sessions already in the store (``analyze --db``), or a clear refusal."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.cli import main
from ctxrelay.store import NewRow, open_store

run_cli = importlib.import_module("ctxrelay.cli.run")

STEPS = [
    {"text": "a", "tool_calls": [{"name": "list_files", "input": {}}], "input_tokens": 1_000},
    {"text": "finished", "input_tokens": 1_200},
]


def _assistant(context: int, read: int) -> NewRow:
    usage = {
        "input_tokens": 10,
        "cache_creation_input_tokens": context - 10 - read,
        "cache_read_input_tokens": read,
        "output_tokens": 400,
    }
    return NewRow(
        "assistant",
        "ok",
        {"usage": usage, "model": "claude-sonnet-4-5", "context_tokens": context},
    )


def _stored_session(db: Path, curve: list[int]) -> None:
    """A stored session whose one window's context follows ``curve`` (a priced model)."""
    store = open_store(db)
    try:
        info = store.create_session(
            metadata={"config": {"limit": 100_000, "output_reserve": 8_000, "threshold": 100}}
        )
        window = store.current_window(info.id)
        store.append(info.id, window.id, [NewRow("user", "go")])
        prev = 0
        for context in curve:
            store.append(info.id, window.id, [_assistant(context, prev)])
            prev = context
    finally:
        store.close()


def _run(tmp_path: Path, db: Path) -> int:
    steps = tmp_path / "steps.json"
    steps.write_text(json.dumps(STEPS))
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    argv = ["--db", str(db), "--model", f"scripted:{steps}", "--limit", "10000"]
    argv += ["--reserve", "2000", "--threshold", "auto", "--workspace", str(ws), "--json"]
    code: int = run_cli.main([*argv, "task"])
    return code


def _newest_config(db: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    store = open_store(db, create=False)
    try:
        info = store.list_sessions(limit=1)[0]
        metadata = store.get_session(info.id).metadata
        return dict(metadata["config"]), dict(metadata)
    finally:
        store.close()


def test_auto_takes_the_analyzers_slider_from_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.db"
    long = list(range(22_000, 90_001, 2_000))  # grows to 90% of its 100k window
    for _ in range(3):
        _stored_session(db, long)
    assert main(["analyze", "--db", str(db), "--sweep", run_cli.AUTO_SWEEP, "--json"]) == 0
    recommended = json.loads(capsys.readouterr().out)["totals"]["recommendation"]

    assert _run(tmp_path, db) == 0
    err = capsys.readouterr().err
    slider = recommended["threshold"]
    assert f"--threshold auto chose {slider:g}%" in err
    assert "over 3 stored sessions" in err
    assert "as recorded" in err
    config, metadata = _newest_config(db)
    assert config["threshold"] == slider
    assert metadata[run_cli.AUTO_KEY]["sessions"] == 3
    assert metadata[run_cli.AUTO_KEY]["cost_usd"] == recommended["cost_usd"]


def test_auto_on_an_empty_store_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "empty.db"
    assert _run(tmp_path, db) == 1
    err = capsys.readouterr().err
    assert "--threshold auto found no stored sessions" in err
    assert "give --threshold P" in err


def test_auto_refuses_when_no_session_reached_a_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "short.db"
    _stored_session(db, [20_000, 22_000, 24_000])  # below 30% of its window throughout
    assert _run(tmp_path, db) == 1
    err = capsys.readouterr().err
    assert "too little to go on" in err
    assert err.count("\n") == 1  # one sentence
    store = open_store(db, create=False)
    try:
        assert len(store.list_sessions()) == 1  # nothing was started
    finally:
        store.close()
