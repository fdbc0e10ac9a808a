"""The subagent reader's small parts: agent types, and the cursor's place."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxrelay.budget.bounds import AGENT_MAX_TURNS
from ctxrelay.claude._agents import agent_name, max_turns_for
from ctxrelay.claude._state import cursor_path
from ctxrelay.hooks.state import host_dir
from ctxrelay.transcripts import read_agent


@pytest.mark.parametrize(
    ("env", "value"),
    [
        ("CTXRELAY_STATE_DIR", "/tmp/explicit"),
        ("XDG_STATE_HOME", "/tmp/xdg"),
        ("XDG_STATE_HOME", "relative/ignored"),
        (None, None),
    ],
)
def test_the_cursor_lives_in_the_hooks_state_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: str | None, value: str | None
) -> None:
    monkeypatch.delenv("CTXRELAY_STATE_DIR", raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    if env is not None and value is not None:
        monkeypatch.setenv(env, value)
    expected = Path(host_dir("claude")) / "agents" / "s-1" / "a-1.json"
    assert Path(cursor_path("s-1", "a-1")) == expected


def test_agent_types_of_the_plugin_and_of_installed_copies() -> None:
    for name, turns in AGENT_MAX_TURNS.items():
        assert max_turns_for(f"ctxrelay:{name}") == turns
        assert max_turns_for(name) == turns
    assert agent_name("other:investigator") is None
    assert max_turns_for("general-purpose") is None
    assert max_turns_for(None) is None
    assert max_turns_for(["investigator"]) is None


def test_a_fifo_or_a_missing_file_is_no_reading(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "agent-x.jsonl"
    os.mkfifo(fifo)
    assert read_agent(str(fifo)) is None  # never blocks on a payload-named FIFO
    assert read_agent(str(tmp_path / "missing.jsonl")) is None


def test_a_corrupt_cursor_means_one_full_pass(tmp_path: Path) -> None:
    transcript = tmp_path / "agent-a.jsonl"
    transcript.write_text(
        '{"type":"assistant","message":{"id":"m1","model":"claude-haiku-4-5",'
        '"content":[{"type":"tool_use"}],"usage":{"input_tokens":90000}}}\n'
        '{"type":"assistant","message":{"id":"m1","model":"claude-haiku-4-5",'
        '"content":[{"type":"text"}],"usage":{"input_tokens":90000}}}\n'
        '{"type":"assistant","message":{"id":"m2","model":"<synthetic>",'
        '"content":[],"usage":{"input_tokens":0}}}\n'
        "not json at all\n"
    )
    cache = tmp_path / "cursor.json"
    cache.write_text("{corrupt")
    reading = read_agent(str(transcript), str(cache))
    assert reading is not None
    assert reading.turns_used == 1
    assert reading.context_tokens == 90_000
    assert reading.model == "claude-haiku-4-5"
    assert reading.ended_on_tool_call
    assert read_agent(str(transcript), str(cache)) == reading
