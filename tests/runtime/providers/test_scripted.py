from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.errors import ConfigError
from ctxrelay.runtime.model import Message, ModelProvider, ModelRequest, TextBlock
from ctxrelay.runtime.providers import (
    SCRIPTED_DEFAULTS,
    model_defaults,
    resolve,
    split_spec,
)
from ctxrelay.runtime.providers.scripted import ScriptedProvider, load_steps


def _req(index: int | None = None) -> ModelRequest:
    meta: dict[str, Any] = {} if index is None else {"response_index": index}
    return ModelRequest(
        system="s", messages=[Message("user", (TextBlock("hello"),))], metadata=meta
    )


def test_steps_in_order_then_done(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(
            [
                {"text": "one", "tool_calls": [{"name": "read_file", "input": {"path": "a"}}]},
                {"text": "two", "input_tokens": 1234},
            ]
        )
    )
    provider = resolve(f"scripted:{path}")
    assert isinstance(provider, ModelProvider)
    first = asyncio.run(provider.complete(_req()))
    assert first.text == "one"
    assert [(c.name, dict(c.input)) for c in first.tool_calls] == [("read_file", {"path": "a"})]
    assert first.stop_reason == "tool_use"
    second = asyncio.run(provider.complete(_req()))
    assert second.usage.input_tokens == 1234
    third = asyncio.run(provider.complete(_req()))
    assert (third.text, list(third.tool_calls)) == ("done", [])


def test_the_loops_response_index_picks_the_step() -> None:
    provider = ScriptedProvider(load_steps([{"text": "a"}, {"text": "b"}]))
    assert asyncio.run(provider.complete(_req(1))).text == "b"
    assert asyncio.run(provider.complete(_req(0))).text == "a"
    assert asyncio.run(provider.complete(_req(7))).text == "done"


def test_counts_the_request_itself_without_input_tokens(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    provider = ScriptedProvider(load_steps([{"text": "a"}]), log=log)
    response = asyncio.run(provider.complete(_req(0)))
    entry = json.loads(log.read_text())
    assert entry["counted_tokens"] == entry["reported_tokens"] == response.usage.input_tokens
    assert response.usage.input_tokens > 0


def test_on_text_receives_the_text() -> None:
    seen: list[str] = []
    provider = ScriptedProvider(load_steps([{"text": "streamed"}]))
    asyncio.run(provider.complete(_req(0), on_text=seen.append))
    assert seen == ["streamed"]


@pytest.mark.parametrize(
    "raw",
    [
        {"text": 3},
        {"tool_calls": {}},
        {"tool_calls": [{"input": {}}]},
        {"tool_calls": [{"name": "x", "input": [], "extra": 1}]},
        {"input_tokens": -1},
        {"input_tokens": True},
        {"delay_s": "1"},
        {"surprise": 1},
        "not an object",
    ],
)
def test_bad_steps_are_one_clear_error(raw: Any) -> None:
    with pytest.raises(ConfigError):
        load_steps([raw])


def test_bad_files_are_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_steps(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_steps(bad)
    bad.write_text("{}")
    with pytest.raises(ConfigError, match="JSON list"):
        load_steps(bad)


def test_specs() -> None:
    assert split_spec("anthropic:claude-x") == ("anthropic", "claude-x")
    for bad in ("nocolon", "scripted:", "mystery:model"):
        with pytest.raises(ConfigError):
            split_spec(bad)
    assert model_defaults("scripted:x.json") == SCRIPTED_DEFAULTS
    with pytest.raises(ConfigError):
        resolve("scripted:x.json", base_url="http://127.0.0.1:1")
