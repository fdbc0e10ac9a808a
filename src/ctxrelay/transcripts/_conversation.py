"""A session's conversation as text: what ``ctxrelay claude mcp``'s ``session_history``
lets a later session of the handoff chain list, search and read.

The rules (``docs/claude-code-facts.md``, "Transcripts"): only ``user`` and ``assistant``
lines of the main chain count (not ``isSidechain`` lines, not ``isMeta`` ones such as the
``/clear`` caveat or a Stop hook's feedback); a user line's content is a prompt (a string
or text blocks) or tool results; an assistant line's content is text, tool calls and
thinking (left out, as is text that is only whitespace). One response is written as
several lines sharing ``message.id``: a block repeated on a later line is kept once.
Other line types (attachments, the request lines, system lines), a line that is not JSON
and a line longer than ``line_cap`` are skipped; a compaction boundary changes nothing
here (every message stays retrievable).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ctxrelay.budget.bounds import TRANSCRIPT_LINE_MAX_BYTES
from ctxrelay.transcripts._hot import open_regular

__all__ = ["Message", "MessageKind", "conversation", "lines_of"]

MessageKind: TypeAlias = Literal["user", "assistant", "tool_call", "tool_result"]
"""The kinds of :class:`Message`, named as the store names its rows."""

_KINDS = (b'"user"', b'"assistant"')


@dataclass(frozen=True, slots=True)
class Message:
    """One piece of the conversation: a prompt, a reply's text, a tool call (its input
    as JSON) or a tool result. ``name`` is a call's tool, ``call_id`` the call a result
    answers (or a call's own id); ``is_error`` marks a failed result."""

    kind: MessageKind
    text: str
    name: str = ""
    call_id: str = ""
    is_error: bool = False


def lines_of(fd: int, cap: int) -> Iterator[bytes]:
    """The file's lines, without those longer than ``cap`` (read in pieces, never whole)."""
    with os.fdopen(fd, "rb") as f:
        while line := f.readline(cap + 1):
            if len(line) > cap and not line.endswith(b"\n"):
                while (rest := f.readline(cap + 1)) and not rest.endswith(b"\n"):
                    pass  # the rest of an over-long line
                continue
            yield line


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "\n".join(
        str(block.get("text", ""))
        for block in blocks
        if isinstance(block, dict) and block.get("type") == "text"
    )


def _of(record: dict[str, Any]) -> Iterator[Message]:
    kind = record.get("type")
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if kind == "user" and isinstance(content, str):
        if content.strip():
            yield Message("user", content)
        return
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        what = block.get("type")
        if what == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            yield Message("user" if kind == "user" else "assistant", block["text"])
        elif kind == "assistant" and what == "tool_use":
            text = json.dumps(block.get("input"), ensure_ascii=False, sort_keys=True)
            yield Message("tool_call", text, str(block.get("name", "")), str(block.get("id", "")))
        elif kind == "user" and what == "tool_result":
            yield Message(
                "tool_result",
                _result_text(block.get("content")),
                call_id=str(block.get("tool_use_id", "")),
                is_error=block.get("is_error") is True,
            )


def conversation(
    path: str | os.PathLike[str], *, line_cap: int = TRANSCRIPT_LINE_MAX_BYTES
) -> Iterator[Message]:
    """The conversation of the transcript at ``path``, oldest first (nothing when it is
    missing or not a regular file)."""
    fd = open_regular(os.fspath(path))
    if fd is None:
        return
    seen: set[tuple[str, MessageKind, str, str]] = set()
    for line in lines_of(fd, line_cap):
        if not any(kind in line for kind in _KINDS):
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if (
            not isinstance(record, dict)
            or record.get("type") not in ("user", "assistant")
            or record.get("isSidechain") is True
            or record.get("isMeta") is True
        ):
            continue
        message = record.get("message")
        message_id = message.get("id") if isinstance(message, dict) else None
        for item in _of(record):
            if isinstance(message_id, str):
                key = (message_id, item.kind, item.call_id, item.text)
                if key in seen:
                    continue
                seen.add(key)
            yield item
