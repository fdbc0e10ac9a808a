"""The main session's last turn, read from the end of its transcript.

The Stop hook needs two facts about the turn that just ended: the context of its newest
request (and the model that answered it), and the tool calls of that turn (did one mark
a task completed, or write the handoff file?). Both come from the transcript's tail,
never from reading the whole file.

A turn starts at the newest real user message: a prompt, or the "Stop hook feedback"
Claude Code adds when a Stop hook continues the session. Tool results are user lines too,
and are not turn starts. A compaction boundary also ends the walk. Subagent lines inline
in old transcripts (``isSidechain``) are skipped. A call whose result is an error (e.g. a
``TodoWrite`` that this Claude Code version does not enable) marked nothing.

Claude Code writes the turn's last response before it runs the ``Stop`` hooks (checked
against the real CLI, see ``docs/claude-code.md``), so this reads the tail as it is.
"""

from __future__ import annotations

import json
import os
from typing import NamedTuple

from ctxrelay.transcripts._hot import is_prompt, lines_backwards, open_regular, tail_context

__all__ = ["TURN_MAX_BYTES", "TurnFacts", "last_turn", "turn_tool_calls"]

_FAILED = (b'"is_error":true', b'"is_error": true')  # a tool result that failed, as written

TURN_MAX_BYTES = 16 * 1024 * 1024
"""The most of the transcript's tail read for one turn's tool calls (a turn that read
many large files can be long; a hook must still stay fast)."""


class TurnFacts(NamedTuple):
    """What the Stop hook learns from the transcript.

    ``context_tokens`` and ``model``: the newest request's (``None`` after a compaction
    or before the first response); ``tool_calls``: ``(tool name, input)`` of the turn's
    main-chain calls that did not fail, oldest first."""

    context_tokens: int | None
    model: str | None
    tool_calls: tuple[tuple[str, object], ...]


def turn_tool_calls(
    path: str | os.PathLike[str], *, max_bytes: int = TURN_MAX_BYTES
) -> tuple[tuple[str, object], ...]:
    """``(tool name, input)`` of the main chain's tool calls in the newest turn, oldest
    first, without the calls whose result was an error. Empty when the file is missing."""
    fd = open_regular(os.fspath(path))
    if fd is None:
        return ()
    calls: list[tuple[str, str, object]] = []
    failed: set[str] = set()
    with os.fdopen(fd, "rb") as f:
        for line in lines_backwards(f, max_bytes=max_bytes):
            if (
                b'"user"' not in line
                and b'"tool_use"' not in line
                and b"compact_boundary" not in line
            ):
                continue
            if b'"tool_result"' in line and not any(e in line for e in _FAILED):
                continue  # a result that did not fail (and so no turn start): not parsed
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if not isinstance(record, dict) or record.get("isSidechain") is True:
                continue
            kind = record.get("type")
            if kind == "system" and record.get("subtype") == "compact_boundary":
                break
            if is_prompt(record):
                break
            message = record.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            if not isinstance(content, list):
                continue
            for block in content:
                if not isinstance(block, dict):
                    continue
                if kind == "assistant" and block.get("type") == "tool_use":
                    name = block.get("name")
                    if isinstance(name, str):
                        calls.append((str(block.get("id", "")), name, block.get("input")))
                elif (
                    kind == "user"
                    and block.get("type") == "tool_result"
                    and block.get("is_error") is True
                ):
                    failed.add(str(block.get("tool_use_id", "")))
    calls.reverse()
    seen: set[str] = set()
    out: list[tuple[str, object]] = []
    for call_id, name, payload in calls:
        if call_id and (call_id in failed or call_id in seen):
            continue  # an error, or the same block repeated on a later line
        seen.add(call_id)
        out.append((name, payload))
    return tuple(out)


def last_turn(path: str | os.PathLike[str]) -> TurnFacts:
    """The newest request's context and model, and the newest turn's tool calls."""
    tokens, model, found = tail_context(os.fspath(path))
    if not found:  # the newest response is further back than the hot path's tail
        from ctxrelay.transcripts._tail import latest_context  # noqa: PLC0415 — _tail's records (dataclasses, ~7 ms): the Stop hook reads the hot tail and needs it only when the newest response is further back

        try:
            reading = latest_context(path)
        except Exception:  # an unreadable transcript: no reading, the hook stays quiet
            reading = None
        tokens = reading.context_tokens if reading is not None else None
        model = reading.model if reading is not None else None
    return TurnFacts(tokens, model, turn_tool_calls(path))
