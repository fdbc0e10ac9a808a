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
from ctxrelay.testing import DONE_TEXT, Step, ToolUse
from ctxrelay.testing import load_steps as server_load_steps


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
        {"delay_s": 3601},
        {"surprise": 1},
        {"usage": {"input_tokens": 1, "tokens": 2}},
        {"output_tokens": 1.5},
        {"stop_reason": 7},
        {"fault": "explode"},
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


def test_one_step_format_for_the_provider_and_the_wire_servers() -> None:
    # The same loader, the same values, the same "done" text.
    assert load_steps is server_load_steps
    raw: list[dict[str, Any]] = [
        {
            "tool_use": [{"name": "read_file", "input": {"path": "a"}, "id": "toolu_1"}],
            "usage": {"input_tokens": 3, "cache_read_input_tokens": 20_000},
            "output_tokens": 12,
            "stop_reason": "tool_use",
        },
    ]
    (step,) = load_steps(raw)
    assert step == Step(
        tool_calls=(ToolUse("read_file", {"path": "a"}, "toolu_1"),),
        input_tokens=3,
        output_tokens=12,
        cache_read_input_tokens=20_000,
        stop_reason="tool_use",
    )
    provider = ScriptedProvider([step])
    response = asyncio.run(provider.complete(_req(0)))
    assert [(c.id, c.name) for c in response.tool_calls] == [("toolu_1", "read_file")]
    assert response.usage.input_tokens == 3
    assert response.usage.cache_read_input_tokens == 20_000
    assert response.usage.context_tokens == 20_003
    assert response.usage.output_tokens == 12
    assert asyncio.run(provider.complete(_req(1))).text == DONE_TEXT


def test_a_cached_step_without_input_tokens_counts_the_rest_of_the_request() -> None:
    plain = asyncio.run(ScriptedProvider(load_steps([{}])).complete(_req(0)))
    cached = ScriptedProvider(load_steps([{"cache_read_input_tokens": 2}]))
    response = asyncio.run(cached.complete(_req(0)))
    assert response.usage.context_tokens == plain.usage.input_tokens
    assert response.usage.input_tokens == plain.usage.input_tokens - 2


def test_the_scripted_provider_refuses_a_fault_step() -> None:
    with pytest.raises(ConfigError, match="step 1 is a fault"):
        ScriptedProvider(load_steps([{"text": "ok"}, {"fault": 529}]))
