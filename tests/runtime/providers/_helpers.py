"""What the server-backed provider tests share: fast retries, a provider pointed at a local
server, a one-tool request, a window with tool turns, and one completion run to the end
with the provider's client closed after it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from ctxrelay.runtime.model import (
    Message,
    ModelRequest,
    TextBlock,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
)
from ctxrelay.runtime.providers._common import RetryPolicy

FAST = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.05)

P = TypeVar("P")


def against(cls: Callable[..., P], model: str, server: Any, **kwargs: Any) -> P:
    """``cls(model)`` at ``server``'s base URL with a test key, retrying ``FAST`` unless
    ``kwargs`` say otherwise."""
    kwargs.setdefault("retry", FAST)
    return cls(model, api_key="test", base_url=server.base_url, **kwargs)


def tool_request(
    name: str, description: str, argument: str, *, ask: str, max_tokens: int
) -> ModelRequest:
    """A request that asks ``ask`` under a short system prompt and offers one tool, whose
    one required argument is the string ``argument``."""
    tool = ToolSpec(
        name,
        description,
        {"type": "object", "properties": {argument: {"type": "string"}}, "required": [argument]},
    )
    return ModelRequest(
        system="You are a careful agent.",
        messages=[Message("user", [TextBlock(ask)])],
        tools=[tool],
        max_tokens=max_tokens,
    )


def tool_turns(base: ModelRequest, *, system: str, said: str) -> ModelRequest:
    """``base``'s tools under ``system``, and a window of three turns: the user's "go"; the
    assistant saying ``said`` (maybe nothing) and calling ``grep`` twice (``call_1`` for
    "x", ``call_2`` for "y"); the two results (the second an error, "boom") with "and?"."""
    return ModelRequest(
        system=system,
        messages=[
            Message("user", [TextBlock("go")]),
            Message(
                "assistant",
                [TextBlock(said)] if said else [],
                [
                    ToolCall("call_1", "grep", {"pattern": "x"}),
                    ToolCall("call_2", "grep", {"pattern": "y"}),
                ],
            ),
            Message(
                "user",
                [
                    ToolResultBlock("call_1", "a.py:1: x"),
                    ToolResultBlock("call_2", "boom", is_error=True),
                    TextBlock("and?"),
                ],
            ),
        ],
        tools=base.tools,
    )


def complete_once(p: Any, request: ModelRequest, **kwargs: Any) -> Any:
    """``p.complete(request)`` to the end, then ``p.aclose()`` (a real provider)."""

    async def go() -> Any:
        try:
            return await p.complete(request, **kwargs)
        finally:
            await p.aclose()

    return asyncio.run(go())
