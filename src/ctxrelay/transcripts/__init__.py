"""Claude Code JSONL transcripts: the one reader the hooks and the analyzer share.

Facts it relies on (``docs/claude-code-facts.md``): a request's context is ``input_tokens +
cache_creation_input_tokens + cache_read_input_tokens`` of its response; one response is
written as several lines sharing ``message.id`` (deduplicated here); old (< 2.0)
transcripts hold subagent lines inline with ``isSidechain: true`` (not the main chain);
a ``system``/``compact_boundary`` line restarts the chain; unknown line types and a
truncated last line are skipped. Subagents have their own files, found with
:func:`subagent_transcript`.

Two readers: :func:`latest_context` / :func:`agent_stats` for hooks (the tail of the
file, stdlib only, fast to import) and :func:`scan` for the analyzer (one full pass).

The names load on first use (PEP 562): the subagent hook imports ``_paths`` and
``_counts`` alone, and must not pay for the analyzer's dataclasses at every tool call.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # mypy reads any constant named TYPE_CHECKING as true
if TYPE_CHECKING:
    from typing import Any

    from ctxrelay.transcripts._counts import SYNTHETIC_MODEL, context_of
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
    "context_of",
    "is_compaction_agent",
    "latest_context",
    "lines_backwards",
    "scan",
    "subagent_transcript",
    "usage_of",
]

_HOME: dict[str, str] = {
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
    "FIRST_CHUNK_BYTES": "_tail",
    "TAIL_MAX_BYTES": "_tail",
    "agent_stats": "_tail",
    "latest_context": "_tail",
    "lines_backwards": "_tail",
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
