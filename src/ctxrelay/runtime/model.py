"""The model seam: provider-neutral requests and responses, and the Protocols that the
Anthropic, OpenAI and scripted providers and the token estimator implement."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "Message",
    "ModelProvider",
    "ModelRequest",
    "ModelResponse",
    "TextBlock",
    "TokenEstimator",
    "ToolCall",
    "ToolResultBlock",
    "ToolSpec",
    "Usage",
]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    input: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class TextBlock:
    text: str


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    tool_call_id: str
    content: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Message:
    """One turn of the conversation. An assistant message may carry ``tool_calls``; a user
    message may carry tool results (providers map them to their own wire format)."""

    role: Literal["user", "assistant"]
    content: Sequence[TextBlock | ToolResultBlock] = ()
    tool_calls: Sequence[ToolCall] = ()


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    @property
    def context_tokens(self) -> int:
        """What the request held: input plus cache writes plus cache reads."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens


@dataclass(frozen=True, slots=True)
class ModelRequest:
    system: str
    messages: Sequence[Message]
    tools: Sequence[ToolSpec] = ()
    max_tokens: int = 4096
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """Host hints, e.g. ``{"cache_breakpoint": index}`` for the window's prefix."""


@dataclass(frozen=True, slots=True)
class ModelResponse:
    text: str
    tool_calls: Sequence[ToolCall]
    usage: Usage
    stop_reason: str
    model: str


@runtime_checkable
class ModelProvider(Protocol):
    """A model behind one ``complete`` call. Providers retry transient failures
    themselves and raise ``ProviderError`` subclasses for the rest."""

    @property
    def name(self) -> str:
        """``provider:model``, e.g. ``anthropic:claude-sonnet-4-5`` or ``scripted:steps.json``."""
        ...

    async def complete(
        self, request: ModelRequest, *, on_text: Callable[[str], None] | None = None
    ) -> ModelResponse:
        """Send the request (streaming where the provider can); ``on_text`` receives text
        deltas as they arrive."""
        ...


@runtime_checkable
class TokenEstimator(Protocol):
    """Counts what the provider has not yet reported: usage is the truth for what was
    sent; the estimate covers what was appended since."""

    def estimate(self, text: str) -> int:
        """Tokens ``text`` is expected to take (conservative before calibration)."""
        ...

    def observe(self, sent_bytes: int, reported_tokens: int) -> None:
        """Calibrate from a request of ``sent_bytes`` that the provider counted as
        ``reported_tokens``."""
        ...
