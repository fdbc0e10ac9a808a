"""Token estimation between provider reports.

Provider-reported usage is the truth for what was sent. What was appended since (tool
results, advisories, user input) is estimated from its UTF-8 size with a bytes-per-token
ratio calibrated per session from that usage; before the first response the ratio is a
conservative default (fewer bytes per token than typical prose or code, so more tokens).
The estimate drives admission and the request-size guard, so it errs high.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from ctxrelay.runtime.model import Message, ModelRequest, TextBlock, ToolResultBlock, ToolSpec

__all__ = [
    "DEFAULT_BYTES_PER_TOKEN",
    "MAX_BYTES_PER_TOKEN",
    "MIN_BYTES_PER_TOKEN",
    "SAFETY_MARGIN",
    "BytesPerTokenEstimator",
    "message_bytes",
    "request_bytes",
    "system_bytes",
    "tools_bytes",
]

DEFAULT_BYTES_PER_TOKEN = 3.0
"""Before the first response: English prose runs near 4 bytes per token and code near
3.5, so 3.0 overestimates both."""

MIN_BYTES_PER_TOKEN = 1.0
MAX_BYTES_PER_TOKEN = 6.0
"""Calibration is clamped here: a provider (or a scripted model) that reports a
wildly different count for a tiny request must not make the estimate absurd."""

SAFETY_MARGIN = 1.1
"""Appended content is estimated 10% high: it may tokenize worse than the average of
the request the ratio was measured on."""


def _block_wire(block: TextBlock | ToolResultBlock) -> Any:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    return {
        "type": "tool_result",
        "tool_use_id": block.tool_call_id,
        "content": block.content,
        "is_error": block.is_error,
    }


def _message_wire(message: Message) -> Any:
    wire: dict[str, Any] = {
        "role": message.role,
        "content": [_block_wire(b) for b in message.content],
    }
    if message.tool_calls:
        wire["tool_calls"] = [
            {"id": c.id, "name": c.name, "input": dict(c.input)} for c in message.tool_calls
        ]
    return wire


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def message_bytes(message: Message) -> int:
    """The size of one message in a provider-neutral JSON rendering."""
    return _size(_message_wire(message))


def request_bytes(request: ModelRequest) -> int:
    """The size of a whole request in the same rendering: system, tools, messages.

    Providers serialise differently, but the ratio calibrated against their reported
    usage absorbs the difference as long as one rendering is used throughout."""
    return (
        system_bytes(request.system)
        + tools_bytes(request.tools)
        + sum(message_bytes(m) for m in request.messages)
    )


def system_bytes(system: str) -> int:
    """The system prompt's share of ``request_bytes``."""
    return _size(system)


def tools_bytes(tools: Sequence[ToolSpec]) -> int:
    """The tool specs' share of ``request_bytes``."""
    wire = [
        {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)}
        for t in tools
    ]
    return _size(wire)


class BytesPerTokenEstimator:
    """A :class:`~ctxrelay.runtime.model.TokenEstimator` calibrated from usage.

    One instance per session; ``observe`` after every response with the size of the
    request that was sent and the tokens the provider counted for it."""

    def __init__(self, default_bytes_per_token: float = DEFAULT_BYTES_PER_TOKEN) -> None:
        if not MIN_BYTES_PER_TOKEN <= default_bytes_per_token <= MAX_BYTES_PER_TOKEN:
            raise ValueError("default_bytes_per_token is out of range")
        self._ratio = default_bytes_per_token
        self.calibrated = False

    @property
    def bytes_per_token(self) -> float:
        return self._ratio

    def observe(self, sent_bytes: int, reported_tokens: int) -> None:
        if sent_bytes <= 0 or reported_tokens <= 0:
            return
        ratio = sent_bytes / reported_tokens
        self._ratio = min(max(ratio, MIN_BYTES_PER_TOKEN), MAX_BYTES_PER_TOKEN)
        self.calibrated = True

    def estimate_bytes(self, size: int) -> int:
        """Tokens for ``size`` bytes of appended content."""
        if size <= 0:
            return 0
        return math.ceil(size * SAFETY_MARGIN / self._ratio)

    def estimate(self, text: str) -> int:
        return self.estimate_bytes(len(text.encode("utf-8")))
