"""A Gemini CLI session file's conversation as text, in the same :class:`Message` pieces
as a Claude Code transcript's, so ``session_history`` searches a Gemini session of the
chain as it does the other hosts'.

The rules (``docs/gemini-facts.md``, "Session file", CLI 0.61.0) are the analyzer's
(:mod:`ctxrelay.transcripts._gemini`): a record keyed by ``id`` replaces an earlier one
with that id (a ``gemini`` record is written again with its finished ``toolCalls``);
``$set.messages`` replaces the history (its messages are read, and what was said before
stays retrievable); ``$rewindTo`` is left alone. A later header line starts a new window
of the same session: the CLI's clear, which ctxrelay's own handoff asks for
(:func:`gemini_windows`). A ``user`` record gives its ``content`` text parts (the
``<session_context>`` part the CLI adds at every window's start is left out); a
``gemini`` record its ``content`` text, then each tool call (``args`` as JSON) and its
result (the ``functionResponse``'s output or error). ``info`` records, thoughts, a line
that is not JSON and one longer than ``line_cap`` are skipped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

from ctxrelay.budget.bounds import TRANSCRIPT_LINE_MAX_BYTES
from ctxrelay.transcripts._conversation import Message, lines_of
from ctxrelay.transcripts._hot import open_regular

__all__ = ["gemini_conversation", "gemini_windows"]

_CONTEXT = "<session_context>"


def _texts(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        if content.strip():
            yield content
        return
    for part in content if isinstance(content, list) else ():
        text = part.get("text") if isinstance(part, dict) else None
        if isinstance(text, str) and text.strip() and not text.startswith(_CONTEXT):
            yield text


def _result(call: dict[str, Any]) -> tuple[str, bool]:
    texts: list[str] = []
    error = call.get("status") == "error"
    for part in call.get("result") or ():
        if not isinstance(part, dict):
            continue
        response = part.get("functionResponse")
        body = response.get("response") if isinstance(response, dict) else None
        if isinstance(body, dict):
            value = body.get("output", body.get("error"))
            error = error or "error" in body
            if value is not None:
                texts.append(value if isinstance(value, str) else json.dumps(value))
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    if not texts and isinstance(call.get("resultDisplay"), str):
        texts.append(call["resultDisplay"])
    return "\n".join(texts), error


def _of(record: dict[str, Any]) -> Iterator[Message]:
    kind = record.get("type")
    if kind == "user":
        for text in _texts(record.get("content")):
            yield Message("user", text)
    elif kind == "gemini":
        for text in _texts(record.get("content")):
            yield Message("assistant", text)
        for call in record.get("toolCalls") or ():
            if not isinstance(call, dict):
                continue
            name, cid = str(call.get("name", "")), str(call.get("id", ""))
            yield Message("tool_call", json.dumps(call.get("args"), ensure_ascii=False), name, cid)
            if "result" in call or "resultDisplay" in call:
                text, error = _result(call)
                yield Message("tool_result", text, call_id=cid, is_error=error)


class _Window:
    """One window's records by id, in the order first seen."""

    def __init__(self) -> None:
        self.records: dict[str, dict[str, Any]] = {}
        self.anonymous = 0

    def add(self, record: dict[str, Any]) -> None:
        rid = record.get("id")
        if not isinstance(rid, str):
            self.anonymous += 1
            rid = f"\0{self.anonymous}"
        self.records[rid] = record

    def messages(self) -> list[Message]:
        return [m for record in self.records.values() for m in _of(record)]


def gemini_windows(
    path: str | os.PathLike[str], *, line_cap: int = TRANSCRIPT_LINE_MAX_BYTES
) -> Iterator[list[Message]]:
    """The windows of the session file at ``path``, oldest first, each its conversation
    (nothing when the file is missing or not a regular file)."""
    fd = open_regular(os.fspath(path))
    if fd is None:
        return
    window: _Window | None = None
    for line in lines_of(fd, line_cap):
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        if "sessionId" in record and "projectHash" in record:  # a header: a window starts
            if window is not None:
                yield window.messages()
            window = _Window()
            for message in record.get("messages") or ():  # the older one-object form
                if isinstance(message, dict):
                    window.add(message)
            continue
        if window is None:
            window = _Window()
        patch = record.get("$set")
        if isinstance(patch, dict):
            for message in patch.get("messages") or ():
                if isinstance(message, dict):
                    window.add(message)
        elif "type" in record:
            window.add(record)
    if window is not None:
        yield window.messages()


def gemini_conversation(
    path: str | os.PathLike[str], *, line_cap: int = TRANSCRIPT_LINE_MAX_BYTES
) -> Iterator[Message]:
    """The conversation of the session file at ``path``, every window, oldest first."""
    for window in gemini_windows(path, line_cap=line_cap):
        yield from window
