"""Claude Code JSONL transcripts: the one reader the hooks and the analyzer share.

Facts it relies on (DESIGN §6): a request's context is ``input_tokens +
cache_creation_input_tokens + cache_read_input_tokens`` of its response; one response is
written as several lines sharing ``message.id`` (deduplicated here); old (< 2.0)
transcripts hold subagent lines inline with ``isSidechain: true`` (not the main chain);
a ``system``/``compact_boundary`` line restarts the chain; unknown line types and a
truncated last line are skipped. Subagents have their own files, found with
:func:`subagent_transcript`.

Two readers: :func:`latest_context` / :func:`agent_stats` for hooks (the tail of the
file, stdlib only, fast to import) and :func:`scan` for the analyzer (one full pass).
"""

from ctxrelay.transcripts._paths import (
    COMPACT_AGENT_PREFIX,
    is_compaction_agent,
    subagent_transcript,
)
from ctxrelay.transcripts._records import (
    SYNTHETIC_MODEL,
    AgentStats,
    Compaction,
    ContextReading,
    Response,
    Usage,
    UsageDict,
    usage_of,
)
from ctxrelay.transcripts._scan import Transcript, scan
from ctxrelay.transcripts._tail import (
    FIRST_CHUNK_BYTES,
    TAIL_MAX_BYTES,
    agent_stats,
    latest_context,
    lines_backwards,
)

__all__ = [
    "COMPACT_AGENT_PREFIX",
    "FIRST_CHUNK_BYTES",
    "SYNTHETIC_MODEL",
    "TAIL_MAX_BYTES",
    "AgentStats",
    "Compaction",
    "ContextReading",
    "Response",
    "Transcript",
    "Usage",
    "UsageDict",
    "agent_stats",
    "is_compaction_agent",
    "latest_context",
    "lines_backwards",
    "scan",
    "subagent_transcript",
    "usage_of",
]
