"""Values read from a Claude Code transcript and the parsing of one line into them.

Stdlib only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

from ctxrelay.transcripts._counts import SYNTHETIC_MODEL, as_count, requested_model
from ctxrelay.transcripts._pass import raw_response, usage_tuple

__all__ = [
    "SYNTHETIC_MODEL",
    "AgentStats",
    "Compaction",
    "ContextReading",
    "Response",
    "Usage",
    "UsageDict",
    "as_count",
    "response_of",
    "usage_of",
]


class UsageDict(TypedDict):
    """The four usage categories of ``docs/contracts.md``, as they appear in ``--json``."""

    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    output_tokens: int


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one model response, Anthropic categories.

    ``input_tokens`` is the uncached input only. Cache writes are split by time to live;
    when a transcript has no split, the writes count as 5-minute writes (the API default).
    """

    input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_1h_tokens: int = 0

    @property
    def cache_creation_5m_tokens(self) -> int:
        return self.cache_creation_input_tokens - self.cache_creation_1h_tokens

    @property
    def context_tokens(self) -> int:
        """The size of the request this response answered (``docs/claude-code-facts.md``)."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_1h_tokens + other.cache_creation_1h_tokens,
        )

    def __reduce__(self) -> tuple[type[Usage], tuple[int, int, int, int, int]]:
        # Pickled as its arguments (the analyzer's workers send reports back): the
        # dataclass's own state pickling is about three times slower.
        return Usage, (
            self.input_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
            self.output_tokens,
            self.cache_creation_1h_tokens,
        )

    def as_dict(self) -> UsageDict:
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "output_tokens": self.output_tokens,
        }


def usage_of(raw: object) -> Usage | None:
    """The :class:`Usage` of a ``message.usage`` object, ``None`` when it is not one
    (the rule is :func:`ctxrelay.transcripts._pass.usage_tuple`)."""
    counts = usage_tuple(raw)
    return None if counts is None else Usage(*counts)


@dataclass(frozen=True, slots=True)
class Response:
    """One model response (one request), deduplicated by ``message.id``.

    ``usage`` is the most complete of the response's lines: Claude Code writes one line
    per content block with the same input counts and a growing ``output_tokens``.
    ``segment`` counts the compactions before it (0 before the first).
    """

    message_id: str
    model: str | None
    usage: Usage
    sidechain: bool = False
    segment: int = 0
    timestamp: str | None = None
    agent_id: str | None = None

    @property
    def context_tokens(self) -> int:
        return self.usage.context_tokens

    def __reduce__(self) -> tuple[type[Response], tuple[object, ...]]:
        # As Usage's: pickled as its arguments.
        return Response, (
            self.message_id,
            self.model,
            self.usage,
            self.sidechain,
            self.segment,
            self.timestamp,
            self.agent_id,
        )


def response_of(record: dict[str, Any]) -> tuple[str, str | None, Usage] | None:
    """``(message id, model, usage)`` of a top-level ``assistant`` line that reports a
    real request; ``None`` for every other line (including synthetic responses)."""
    if record.get("type") != "assistant":
        return None
    message = record.get("message")
    if not isinstance(message, dict):
        return None
    found = raw_response(message)
    if found is None:
        return None
    message_id, model, counts = found
    return message_id, requested_model(record) or model, Usage(*counts)


@dataclass(frozen=True, slots=True)
class Compaction:
    """A ``system``/``compact_boundary`` line: the chain restarts after it.

    ``after_requests`` is how many main-chain requests came before it; ``summary_chars``
    the length of the summary text Claude Code put in the new chain (0 if not found).
    """

    pre_tokens: int | None
    trigger: str | None
    after_requests: int
    summary_chars: int = 0
    timestamp: str | None = None


@dataclass(frozen=True, slots=True)
class ContextReading:
    """The latest context of a chain, read from the tail of its transcript.

    ``context_tokens`` is ``None`` when a compaction is newer than the latest response
    (``compacted`` is then true and ``pre_tokens`` says how large the chain had grown).
    """

    context_tokens: int | None
    model: str | None = None
    message_id: str | None = None
    usage: Usage | None = None
    compacted: bool = False
    pre_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class AgentStats:
    """What the subagent hook needs from a subagent's own transcript."""

    turns_used: int
    """Assistant responses so far (unique ``message.id``)."""
    context_tokens: int | None
    model: str | None
    message_id: str | None = None
