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

OpenCode's database is read by :func:`read_opencode` (``docs/opencode-facts.md``), one
:class:`Transcript` per OpenCode session; one session of it (named by
:func:`session_locator`, ``…/opencode.db#ses_…``) by :func:`opencode_started` and
:func:`opencode_conversation` for the OpenCode host and ``session_history``.

Codex rollouts are read here too, by their own rules (``docs/codex-facts.md``):
:func:`codex_context` for a Codex hook (the context now, stdlib only), :func:`read_rollout`
for the analyzer, and :func:`scan_file` reads either kind of file. The Gemini CLI's
session files by theirs (``docs/gemini-facts.md``): :func:`gemini_context` and
:func:`gemini_started` for its hooks.

The readers: the hooks' hot path (:func:`tail_context`, and :func:`call_response`: the
response that made a tool call, waited for while Claude Code has not written it yet;
:func:`read_agent`: a subagent's file, incrementally from a cursor),
:func:`last_turn` (the Stop hook's view of the turn that ended),
:func:`latest_context` / :func:`agent_stats` (the tail of the file, stdlib only) and
:func:`scan` for the analyzer (one full pass); :func:`read_result_since` for the re-read
guard (a Read's result and no compaction after a byte offset), :func:`call_in_rollout`
for Codex's (a call still in the thread's history, across a rewind); :func:`conversation` for
``session_history`` (a session's prompts, replies, tool calls and results as text),
:func:`codex_conversation` for a Codex rollout's, :func:`gemini_conversation` for a
Gemini session file's (:func:`gemini_windows`, window by window), and
:func:`conversation_of` reading a session with its own host's reader; :func:`started`
for every host's hook (whether a session of any host has started from a handoff file, by
that host's rule).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, for type checkers
    from ctxrelay.transcripts._agent import AgentReading as AgentReading
    from ctxrelay.transcripts._agent import read_agent as read_agent
    from ctxrelay.transcripts._codex import CodexResponse as CodexResponse
    from ctxrelay.transcripts._codex import Rollout as Rollout
    from ctxrelay.transcripts._codex import is_rollout as is_rollout
    from ctxrelay.transcripts._codex import read_rollout as read_rollout
    from ctxrelay.transcripts._codex_conversation import (
        codex_conversation as codex_conversation,
    )
    from ctxrelay.transcripts._codex_tail import CodexContext as CodexContext
    from ctxrelay.transcripts._codex_tail import codex_context as codex_context
    from ctxrelay.transcripts._codex_tail import codex_source as codex_source
    from ctxrelay.transcripts._conversation import Message as Message
    from ctxrelay.transcripts._conversation import MessageKind as MessageKind
    from ctxrelay.transcripts._conversation import conversation as conversation
    from ctxrelay.transcripts._counts import SYNTHETIC_MODEL as SYNTHETIC_MODEL
    from ctxrelay.transcripts._counts import context_of as context_of
    from ctxrelay.transcripts._formats import scan_file as scan_file
    from ctxrelay.transcripts._gemini_conversation import (
        gemini_conversation as gemini_conversation,
    )
    from ctxrelay.transcripts._gemini_conversation import gemini_windows as gemini_windows
    from ctxrelay.transcripts._gemini_tail import RESULT_SINCE_MAX_BYTES as RESULT_SINCE_MAX_BYTES
    from ctxrelay.transcripts._gemini_tail import GeminiContext as GeminiContext
    from ctxrelay.transcripts._gemini_tail import gemini_context as gemini_context
    from ctxrelay.transcripts._gemini_tail import gemini_result_kept as gemini_result_kept
    from ctxrelay.transcripts._gemini_tail import gemini_started as gemini_started
    from ctxrelay.transcripts._history import READERS as READERS
    from ctxrelay.transcripts._history import WINDOWS as WINDOWS
    from ctxrelay.transcripts._history import conversation_of as conversation_of
    from ctxrelay.transcripts._history import windows_of as windows_of
    from ctxrelay.transcripts._hot import CALL_SEARCH_MAX_BYTES as CALL_SEARCH_MAX_BYTES
    from ctxrelay.transcripts._hot import FIRST_CHUNK_BYTES as FIRST_CHUNK_BYTES
    from ctxrelay.transcripts._hot import HOT_TAIL_BYTES as HOT_TAIL_BYTES
    from ctxrelay.transcripts._hot import TAIL_MAX_BYTES as TAIL_MAX_BYTES
    from ctxrelay.transcripts._hot import call_response as call_response
    from ctxrelay.transcripts._hot import lines_backwards as lines_backwards
    from ctxrelay.transcripts._hot import tail_context as tail_context
    from ctxrelay.transcripts._opencode import OpenCodeSession as OpenCodeSession
    from ctxrelay.transcripts._opencode import read_opencode as read_opencode
    from ctxrelay.transcripts._opencode_paths import default_opencode_db as default_opencode_db
    from ctxrelay.transcripts._opencode_paths import session_locator as session_locator
    from ctxrelay.transcripts._opencode_paths import split_locator as split_locator
    from ctxrelay.transcripts._opencode_session import (
        opencode_conversation as opencode_conversation,
    )
    from ctxrelay.transcripts._opencode_session import opencode_started as opencode_started
    from ctxrelay.transcripts._paths import COMPACT_AGENT_PREFIX as COMPACT_AGENT_PREFIX
    from ctxrelay.transcripts._paths import is_compaction_agent as is_compaction_agent
    from ctxrelay.transcripts._paths import subagent_transcript as subagent_transcript
    from ctxrelay.transcripts._records import AgentStats as AgentStats
    from ctxrelay.transcripts._records import Compaction as Compaction
    from ctxrelay.transcripts._records import ContextReading as ContextReading
    from ctxrelay.transcripts._records import Response as Response
    from ctxrelay.transcripts._records import Usage as Usage
    from ctxrelay.transcripts._records import UsageDict as UsageDict
    from ctxrelay.transcripts._records import usage_of as usage_of
    from ctxrelay.transcripts._scan import Transcript as Transcript
    from ctxrelay.transcripts._scan import read_touches as read_touches
    from ctxrelay.transcripts._scan import scan as scan
    from ctxrelay.transcripts._since import SINCE_MAX_BYTES as SINCE_MAX_BYTES
    from ctxrelay.transcripts._since import call_in_rollout as call_in_rollout
    from ctxrelay.transcripts._since import read_result_since as read_result_since
    from ctxrelay.transcripts._started import STARTED_RULES as STARTED_RULES
    from ctxrelay.transcripts._started import StartedRule as StartedRule
    from ctxrelay.transcripts._started import claude_started as claude_started
    from ctxrelay.transcripts._started import codex_started as codex_started
    from ctxrelay.transcripts._started import injection_mark as injection_mark
    from ctxrelay.transcripts._started import started as started
    from ctxrelay.transcripts._tail import agent_stats as agent_stats
    from ctxrelay.transcripts._tail import latest_context as latest_context
    from ctxrelay.transcripts._touches import FILE_TOOLS as FILE_TOOLS
    from ctxrelay.transcripts._touches import Touch as Touch
    from ctxrelay.transcripts._touches import Touches as Touches
    from ctxrelay.transcripts._touches import unpack_touches as unpack_touches
    from ctxrelay.transcripts._turn import TURN_MAX_BYTES as TURN_MAX_BYTES
    from ctxrelay.transcripts._turn import TurnFacts as TurnFacts
    from ctxrelay.transcripts._turn import last_turn as last_turn
    from ctxrelay.transcripts._turn import turn_tool_calls as turn_tool_calls

# Each public name under the module that defines it, and the one list ``__all__`` and
# ``__getattr__`` are made from. The names load on first use (PEP 562): the hooks import
# the tail readers, and a plain import of every name here would load the analyzer's
# forward pass (``_scan``, ``_pass``) into every hook process.
_NAMES: dict[str, tuple[str, ...]] = {
    "_agent": ("AgentReading", "read_agent"),
    "_codex": ("CodexResponse", "Rollout", "is_rollout", "read_rollout"),
    "_codex_conversation": ("codex_conversation",),
    "_codex_tail": ("CodexContext", "codex_context", "codex_source"),
    "_history": ("READERS", "WINDOWS", "conversation_of", "windows_of"),
    "_conversation": ("Message", "MessageKind", "conversation"),
    "_counts": ("SYNTHETIC_MODEL", "context_of"),
    "_formats": ("scan_file",),
    "_gemini_conversation": ("gemini_conversation", "gemini_windows"),
    "_gemini_tail": (
        "RESULT_SINCE_MAX_BYTES",
        "GeminiContext",
        "gemini_context",
        "gemini_result_kept",
        "gemini_started",
    ),
    "_hot": (
        "CALL_SEARCH_MAX_BYTES",
        "FIRST_CHUNK_BYTES",
        "HOT_TAIL_BYTES",
        "TAIL_MAX_BYTES",
        "call_response",
        "lines_backwards",
        "tail_context",
    ),
    "_opencode": ("OpenCodeSession", "read_opencode"),
    "_opencode_paths": ("default_opencode_db", "session_locator", "split_locator"),
    "_opencode_session": ("opencode_conversation", "opencode_started"),
    "_paths": ("COMPACT_AGENT_PREFIX", "is_compaction_agent", "subagent_transcript"),
    "_records": (
        "AgentStats",
        "Compaction",
        "ContextReading",
        "Response",
        "Usage",
        "UsageDict",
        "usage_of",
    ),
    "_scan": ("Transcript", "read_touches", "scan"),
    "_since": ("SINCE_MAX_BYTES", "call_in_rollout", "read_result_since"),
    "_started": (
        "STARTED_RULES",
        "StartedRule",
        "claude_started",
        "codex_started",
        "injection_mark",
        "started",
    ),
    "_tail": ("agent_stats", "latest_context"),
    "_touches": ("FILE_TOOLS", "Touch", "Touches", "unpack_touches"),
    "_turn": ("TURN_MAX_BYTES", "TurnFacts", "last_turn", "turn_tool_calls"),
}
_HOME = {name: module for module, names in _NAMES.items() for name in names}

__all__ = sorted(_HOME)  # noqa: PLE0605 - made from the table above


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
