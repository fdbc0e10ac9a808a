"""Claude Code JSONL transcripts: the one reader the hooks and the analyzer share.

Nothing outside this package parses transcript lines: every rule about Claude Code's
JSONL (line types, ``message.id`` dedupe, sidechains, compaction boundaries,
``<synthetic>`` lines, usage sums, turn starts, the response that made a tool call)
lives here.

Facts it relies on (``docs/claude-code-facts.md``): a request's context is ``input_tokens +
cache_creation_input_tokens + cache_read_input_tokens`` of its response; one response is
written as several lines sharing ``message.id`` (deduplicated here); old (< 2.0)
transcripts hold subagent lines inline with ``isSidechain: true`` (not the main chain);
a ``system``/``compact_boundary`` line restarts the chain; unknown line types and a
truncated last line are skipped. Subagents have their own files, found with
:func:`subagent_transcript`.

The readers: the hooks' hot path (:func:`tail_context`, and :func:`call_response`: the
response that made a tool call, waited for while Claude Code has not written it yet;
:func:`read_agent`: a subagent's file, incrementally from a cursor; ``os`` and the C
JSON codec only), :func:`last_turn` (the Stop hook's view of the turn that ended),
:func:`latest_context` / :func:`agent_stats` (the tail of the file, stdlib only) and
:func:`scan` for the analyzer (one full pass); :func:`read_result_since` for the re-read
guard (a Read's result and no compaction after a byte offset).

The names load on first use (PEP 562): the subagent hook imports ``_paths`` and
``_counts`` alone, and must not pay for the analyzer's dataclasses at every tool call.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # mypy reads any constant named TYPE_CHECKING as true
if TYPE_CHECKING:
    from typing import Any

    from ctxrelay.transcripts._agent import AgentReading, read_agent
    from ctxrelay.transcripts._counts import SYNTHETIC_MODEL, context_of
    from ctxrelay.transcripts._hot import (
        CALL_SEARCH_MAX_BYTES,
        FIRST_CHUNK_BYTES,
        HOT_TAIL_BYTES,
        TAIL_MAX_BYTES,
        call_response,
        lines_backwards,
        tail_context,
    )
    from ctxrelay.transcripts._paths import (
        COMPACT_AGENT_PREFIX,
        is_compaction_agent,
        subagent_transcript,
    )
    from ctxrelay.transcripts._records import (
        AgentStats,
        Compaction,
        ContextReading,
        Response,
        Usage,
        UsageDict,
        usage_of,
    )
    from ctxrelay.transcripts._scan import Transcript, scan
    from ctxrelay.transcripts._since import SINCE_MAX_BYTES, read_result_since
    from ctxrelay.transcripts._tail import agent_stats, latest_context
    from ctxrelay.transcripts._turn import TURN_MAX_BYTES, TurnFacts, last_turn, turn_tool_calls

__all__ = [
    "CALL_SEARCH_MAX_BYTES",
    "COMPACT_AGENT_PREFIX",
    "FIRST_CHUNK_BYTES",
    "HOT_TAIL_BYTES",
    "SINCE_MAX_BYTES",
    "SYNTHETIC_MODEL",
    "TAIL_MAX_BYTES",
    "TURN_MAX_BYTES",
    "AgentReading",
    "AgentStats",
    "Compaction",
    "ContextReading",
    "Response",
    "Transcript",
    "TurnFacts",
    "Usage",
    "UsageDict",
    "agent_stats",
    "call_response",
    "context_of",
    "is_compaction_agent",
    "last_turn",
    "latest_context",
    "lines_backwards",
    "read_agent",
    "read_result_since",
    "scan",
    "subagent_transcript",
    "tail_context",
    "turn_tool_calls",
    "usage_of",
]

_HOME: dict[str, str] = {
    "AgentReading": "_agent",
    "read_agent": "_agent",
    "SYNTHETIC_MODEL": "_counts",
    "context_of": "_counts",
    "COMPACT_AGENT_PREFIX": "_paths",
    "is_compaction_agent": "_paths",
    "subagent_transcript": "_paths",
    "AgentStats": "_records",
    "Compaction": "_records",
    "ContextReading": "_records",
    "Response": "_records",
    "Usage": "_records",
    "UsageDict": "_records",
    "usage_of": "_records",
    "Transcript": "_scan",
    "scan": "_scan",
    "SINCE_MAX_BYTES": "_since",
    "read_result_since": "_since",
    "CALL_SEARCH_MAX_BYTES": "_hot",
    "FIRST_CHUNK_BYTES": "_hot",
    "HOT_TAIL_BYTES": "_hot",
    "TAIL_MAX_BYTES": "_hot",
    "call_response": "_hot",
    "lines_backwards": "_hot",
    "tail_context": "_hot",
    "agent_stats": "_tail",
    "latest_context": "_tail",
    "TURN_MAX_BYTES": "_turn",
    "TurnFacts": "_turn",
    "last_turn": "_turn",
    "turn_tool_calls": "_turn",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = f"{__name__}.{home}"
    __import__(module)  # not importlib: the hook would pay for importing it
    value = getattr(sys.modules[module], name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
