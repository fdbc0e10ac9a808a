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
:func:`read_agent`: a subagent's file, incrementally from a cursor),
:func:`last_turn` (the Stop hook's view of the turn that ended),
:func:`latest_context` / :func:`agent_stats` (the tail of the file, stdlib only) and
:func:`scan` for the analyzer (one full pass); :func:`read_result_since` for the re-read
guard (a Read's result and no compaction after a byte offset).
"""

from __future__ import annotations

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
