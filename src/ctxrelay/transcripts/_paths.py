"""Locating a subagent's transcript from a hook payload without trusting the payload.

``session_id`` and ``agent_id`` come from Claude Code's hook payload; they become path
parts only when they are plain names, and the result must stay inside the directory of
``transcript_path``.
"""

from __future__ import annotations

import os

__all__ = ["COMPACT_AGENT_PREFIX", "is_compaction_agent", "subagent_transcript"]

COMPACT_AGENT_PREFIX = "acompact-"
"""Agent files of Claude Code's compaction summarizer (``agent-acompact-*.jsonl``): not a
subagent of the user's, so hooks and the analyzer skip them."""

# Plain names only: ids Claude Code writes are hex/uuid-like.
_FIRST = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_REST = _FIRST | {"_", "-"}
_NAME_MAX = 128


def _plain_name(value: str) -> bool:
    return 0 < len(value) <= _NAME_MAX and value[0] in _FIRST and all(ch in _REST for ch in value)


def is_compaction_agent(agent_id: str) -> bool:
    return agent_id.startswith(COMPACT_AGENT_PREFIX)


def subagent_transcript(
    transcript_path: str | os.PathLike[str],
    session_id: object,
    agent_id: object,
    *,
    must_exist: bool = True,
) -> str | None:
    """``<dir of transcript_path>/<session_id>/subagents/agent-<agent_id>.jsonl``.

    ``None`` when either id is not a plain name (no separators, no ``..``), when the agent
    is the compaction summarizer, when the result would leave the transcript's directory
    (a symlinked ``subagents`` pointing elsewhere), or, with ``must_exist``, when there is
    no such regular file.
    """
    if not isinstance(session_id, str) or not isinstance(agent_id, str):
        return None
    if not _plain_name(session_id) or not _plain_name(agent_id):
        return None
    if is_compaction_agent(agent_id):
        return None
    base = os.path.dirname(os.path.abspath(os.fspath(transcript_path)))
    candidate = os.path.join(base, session_id, "subagents", f"agent-{agent_id}.jsonl")
    if not must_exist:
        return candidate
    real_base = os.path.realpath(base)
    real = os.path.realpath(candidate)
    if os.path.commonpath([real_base, real]) != real_base:
        return None
    return candidate if os.path.isfile(real) else None
