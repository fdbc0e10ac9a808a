"""A Codex hook's reader: the context of a Codex rollout now, read from its end.

Codex writes one ``token_usage_record`` line per model response; the context of the next
request is the newest response's ``input_tokens`` (cached included) plus its
``output_tokens``. The model is the ``model`` of the newest ``turn_context`` line. A
compaction writes a ``compacted`` line and then a ``token_count`` whose
``last_token_usage`` is all zeros: after either, the context restarted and is not known
until the next response (``docs/codex-facts.md``, "The rollout file"). A zero
``token_count`` that follows a response of zero tokens is that response's, not a reset.

Like the Claude Code tail reader (:mod:`ctxrelay.transcripts._tail`) it reads chunks
backwards from the end and decodes only the lines that name one of those types, with
the standard library's ``json``: a hook imports it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ctxrelay.transcripts._counts import as_count
from ctxrelay.transcripts._hot import (
    FIRST_CHUNK_BYTES,
    TAIL_MAX_BYTES,
    json_record,
    lines_backwards,
    open_regular,
)

__all__ = [
    "COMPACTED",
    "TOKEN_COUNT",
    "TURN_CONTEXT",
    "USAGE_RECORD",
    "CodexContext",
    "codex_context",
    "codex_counts",
    "codex_source",
    "is_reset",
]

USAGE_RECORD = b'"token_usage_record"'
"""The type of the one line per model response (quoted: the ``compacted`` line's
``latest_token_usage_record`` key does not match)."""
TURN_CONTEXT = b'"turn_context"'
COMPACTED = b'"compacted"'
TOKEN_COUNT = b'"token_count"'
_WINDOW = b'"model_context_window"'


@dataclass(frozen=True, slots=True)
class CodexContext:
    """The context of a Codex thread now, from the tail of its rollout.

    ``context_tokens`` is the newest response's input plus output, ``None`` when a
    compaction is newer than every response (``compacted`` is then true and
    ``pre_tokens`` is the context of the last response before it, when it was within
    the tail read). ``model`` is the newest ``turn_context``'s. ``window`` is the
    ``model_context_window`` Codex reported last: the *effective* window, 95% of the
    configured one."""

    context_tokens: int | None
    model: str | None = None
    response_id: str | None = None
    window: int | None = None
    compacted: bool = False
    pre_tokens: int | None = None


def codex_counts(usage: object) -> tuple[int, int, int, int] | None:
    """``(input, cached input, output, reasoning)`` of a Codex usage object, ``None`` when
    it is not one. Input includes the cached part and output the reasoning, as Codex
    reports them; cached input is at most the input."""
    if not isinstance(usage, dict):
        return None
    fresh = as_count(usage.get("input_tokens"))
    # ``cache_read_input_tokens`` where a rollout names its cached input so (ccusage reads it)
    cached = usage.get("cached_input_tokens", usage.get("cache_read_input_tokens"))
    return (
        fresh,
        min(as_count(cached), fresh),
        as_count(usage.get("output_tokens")),
        as_count(usage.get("reasoning_output_tokens")),
    )


def is_reset(payload: object) -> bool:
    """Whether an ``event_msg`` payload is the ``token_count`` Codex writes after a
    compaction: ``last_token_usage`` with zero input and zero output."""
    if not isinstance(payload, dict) or payload.get("type") != "token_count":
        return False
    info = payload.get("info")
    last = info.get("last_token_usage") if isinstance(info, dict) else None
    counts = codex_counts(last)
    return counts is not None and counts[0] == 0 and counts[2] == 0


def _window(payload: dict[str, Any]) -> int | None:
    info = payload.get("info") if payload.get("type") == "token_count" else payload
    if not isinstance(info, dict) or "model_context_window" not in info:
        return None
    return as_count(info.get("model_context_window")) or None


def codex_source(path: str | os.PathLike[str]) -> str | None:
    """Which front end runs the thread: the ``source`` of the rollout's first line, its
    ``session_meta`` (``"exec"`` for ``codex exec``, ``"cli"`` for the TUI on 0.171);
    ``None`` when the file or the field is missing."""
    fd = open_regular(os.fspath(path))
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as f:
        first = f.readline(FIRST_CHUNK_BYTES * 16)
    record = json_record(first)
    payload = record.get("payload") if record is not None else None
    if not isinstance(record, dict) or record.get("type") != "session_meta":
        return None
    source = payload.get("source") if isinstance(payload, dict) else None
    return source if isinstance(source, str) else None


def codex_context(
    path: str | os.PathLike[str],
    *,
    first_chunk: int = FIRST_CHUNK_BYTES,
    max_bytes: int = TAIL_MAX_BYTES,
) -> CodexContext | None:
    """The context of a Codex rollout's thread now (:class:`CodexContext`).

    ``None`` when the file does not exist, is not a regular file, or holds no response
    and no compaction within its last ``max_bytes``."""
    fd = open_regular(os.fspath(path))
    if fd is None:
        return None
    model: str | None = None
    window: int | None = None
    # "open": looking for the newest response; "reset?": a zero token_count came first
    # (a compaction's, or a response that used nothing); "before": after a compaction,
    # looking for the response before it; "done"
    state = "open"
    context: int | None = None
    response_id: str | None = None
    pre_tokens: int | None = None
    compacted = False
    with os.fdopen(fd, "rb") as f:
        for line in lines_backwards(f, first_chunk=first_chunk, max_bytes=max_bytes):
            looking = state != "done"
            if not (
                (model is None and TURN_CONTEXT in line)
                or (looking and (USAGE_RECORD in line or COMPACTED in line))
                or (state == "open" and TOKEN_COUNT in line)
                or (window is None and _WINDOW in line)
            ):
                continue
            record = json_record(line)
            payload = None if record is None else record.get("payload")
            if record is None or not isinstance(payload, dict):
                continue
            kind = record.get("type")
            if kind == "turn_context" and model is None:
                value = payload.get("model")
                model = value if isinstance(value, str) and value else None
            elif kind == "event_msg":
                window = window if window is not None else _window(payload)
                if state == "open" and is_reset(payload):
                    state = "reset?"
            elif kind == "compacted" and looking:
                # a second compaction before any response: the size before it is unknown
                state = "done" if state == "before" else "before"
                compacted = True
            elif kind == "token_usage_record" and looking:
                counts = codex_counts(payload.get("usage"))
                if counts is None:
                    continue
                size = counts[0] + counts[2]
                if state == "open" or (state == "reset?" and size == 0):
                    rid = payload.get("response_id")
                    context, response_id = size, rid if isinstance(rid, str) else None
                else:  # the response before a compaction
                    compacted, pre_tokens = True, size
                state = "done"
            if state == "done" and model is not None and window is not None:
                break
    if state == "open":
        return None
    compacted = compacted or state == "reset?"
    return CodexContext(
        None if compacted else context,
        model,
        None if compacted else response_id,
        window,
        compacted,
        pre_tokens,
    )
