"""LangChain with Anthropic's chat model: what the shared suite does not pin (content
blocks in the codec, the cache fields of the provider's count)."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from typing import Any

import pytest

if importlib.util.find_spec("langchain_anthropic") is None:
    pytest.skip(
        "langchain-anthropic is not installed (pip install 'ctxrelay[langchain]')",
        allow_module_level=True,
    )

from langchain_core.messages import AIMessage

from ctxrelay.integrations.langchain import LangChainCodec
from ctxrelay.runtime.events import DispatchEvent, Event
from ctxrelay.store import open_store
from ctxrelay.testing import Step, ToolUse
from tests.integrations.harness import LangChainAnthropicHarness
from tests.integrations.test_conformance import BUDGET

CALL = {"id": "toolu_1", "name": "read_file", "args": {"path": "README.md"}}


def test_an_anthropic_answer_stores_its_text_without_the_tool_use_blocks() -> None:
    # ChatAnthropic's answer: content blocks, the tool call a block of its own too.
    blocks: list[str | dict[str, Any]] = [
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": CALL["args"]},
    ]
    message = AIMessage(content=blocks, tool_calls=[CALL])
    rows = LangChainCodec().describe(message)
    assert [(r.kind, r.text) for r in rows] == [("assistant", "Reading."), ("tool_call", "")]
    assert rows[1].call_id == "toolu_1"
    assert rows[1].arguments == {"path": "README.md"}


def test_an_answer_keys_the_same_as_a_string_or_as_content_blocks() -> None:
    codec = LangChainCodec()
    as_string = AIMessage(content="Reading.", tool_calls=[CALL])
    blocks: list[str | dict[str, Any]] = [
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": CALL["args"]},
    ]
    as_blocks = AIMessage(content=blocks, tool_calls=[CALL])
    assert codec.key(as_string) == codec.key(as_blocks)
    assert codec.describe(as_string)[0].text == codec.describe(as_blocks)[0].text


@pytest.mark.parametrize("stream", [False, True], ids=["run", "streamed"])
def test_cached_input_counts_in_the_window(tmp_path: Path, stream: bool) -> None:
    # The Messages API's input_tokens leaves out the cached part; the window holds all
    # 110,000 tokens, over the 100,000 at which the warning is due.
    (tmp_path / "README.md").write_text("# todo\n")
    steps = [
        Step(
            text="Reading.",
            tool_calls=[ToolUse("read_file", {"path": "README.md"})],
            input_tokens=5_000,
            cache_read_input_tokens=100_000,
            cache_creation_input_tokens=5_000,
        ),
        Step(text="Done.", input_tokens=6_000, cache_read_input_tokens=105_000),
    ]
    harness = LangChainAnthropicHarness()
    events: list[Event] = []
    store = open_store(str(tmp_path / "relay.db"))
    try:
        integration = harness.open(
            store, session_id="s1", budget=BUDGET, workspace=tmp_path, on_event=events.append
        )
        with harness.server(steps) as server:
            answer = asyncio.run(harness.run(integration, server, "Read it.", stream=stream))
        rows = store.rows("s1")
    finally:
        store.close()
    assert answer == "Done."
    dispatches = [e for e in events if isinstance(e, DispatchEvent)]
    assert [d.decision for d in dispatches] == ["continue", "warn"]
    assert dispatches[1].tokens >= 110_000
    answers = [r for r in rows if r.kind == "assistant"]
    assert [r.metadata["usage"]["input_tokens"] for r in answers] == [110_000, 111_000]
    assert [r.metadata["stage"] for r in rows if r.kind == "warning"] == ["warning"]
