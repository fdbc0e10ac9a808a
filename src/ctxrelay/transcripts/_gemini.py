"""The Gemini CLI's session files as the analyzer reads them: every response priced at
its own model, the chain split where the history was replaced (a clear or a
compression).

The format (``docs/gemini-facts.md``, "Session file", CLI 0.61.0) is JSONL: a header
line (``{"sessionId", "projectHash", "startTime", "lastUpdated", "kind"}``; a later
header starts a new window of the same session, after a clear); message records keyed by
``id`` (``type`` ``user``, ``gemini`` or ``info``), where a later record with the same id
replaces the earlier one (a ``gemini`` record is written again once its tool calls
finish: counted once); ``{"$set": {...}}`` patches, where ``$set.messages`` replaces
every message (a clear or a compression: the responses before it were still sent and
billed, so they stay, and the chain restarts after it); and ``{"$rewindTo": id}`` (the
messages after ``id`` leave the conversation, not the bill). Older versions wrote one
JSON object ``{"sessionId", "projectHash", "messages": [...]}`` to a ``.json`` file;
it is read by the same rules.

A ``gemini`` record's ``tokens``: ``input`` is the whole prompt (``cached`` included),
``output`` the answer, ``thoughts`` the thinking, billed as output. In ctxrelay's
categories: uncached input ``input - cached``, cache reads ``cached``, no cache writes
(Gemini charges none), output ``output + thoughts``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts._pass import open_fd
from ctxrelay.transcripts._records import Compaction, Response, Usage
from ctxrelay.transcripts._scan import Transcript

__all__ = ["is_gemini_session", "read_gemini"]

_HEAD_BYTES = 4096


def is_gemini_session(path: str) -> bool:
    """Whether ``path`` is a Gemini CLI session file: its first record is a header
    (``sessionId`` and ``projectHash``), or, for the older ``.json`` form, one object
    that starts with them. False when it cannot be read (the reader then says why)."""
    try:
        fd = open_fd(path)  # never blocks on a FIFO; None for what is not a regular file
    except TranscriptError:
        return False
    if fd is None:
        return False
    with open(fd, "rb", buffering=0) as f:
        head = f.read(_HEAD_BYTES) or b""
    first = head.split(b"\n", 1)[0]
    return first.startswith(b'{"sessionId"') and b'"projectHash"' in head


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _usage(tokens: dict[str, Any]) -> Usage:
    prompt, cached = _count(tokens.get("input")), _count(tokens.get("cached"))
    output = _count(tokens.get("output")) + _count(tokens.get("thoughts"))
    return Usage(max(prompt - cached, 0), 0, min(cached, prompt), output)


class _Pass:
    """The records of one file in order: the one statement of the rules above."""

    def __init__(self) -> None:
        self.session: str | None = None
        self.kind: str | None = None
        self.responses: dict[str, Response] = {}
        self.compactions: list[Compaction] = []
        self.segment = 0
        self.duplicates = 0
        self.last_context: int | None = None
        self.models: dict[str, None] = {}

    def header(self, record: dict[str, Any]) -> None:
        if self.session is None and isinstance(record.get("sessionId"), str):
            self.session = record["sessionId"]
            kind = record.get("kind")
            self.kind = kind if isinstance(kind, str) else None

    def message(self, record: dict[str, Any]) -> None:
        tokens, rid = record.get("tokens"), record.get("id")
        if (
            record.get("type") != "gemini"
            or not isinstance(tokens, dict)
            or not isinstance(rid, str)
        ):
            return
        model = record.get("model") if isinstance(record.get("model"), str) else None
        stamp = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
        response = Response(rid, model, _usage(tokens), False, self.segment, stamp)
        if rid in self.responses:
            self.duplicates += 1
            # written again once its tool calls finished: the same response, kept where it was
            kept = self.responses[rid].segment
            self.responses[rid] = Response(rid, model, response.usage, False, kept, stamp)
            return
        self.responses[rid] = response
        if model:
            self.models[model] = None
        self.last_context = response.context_tokens

    def replaced(self, stamp: str | None) -> None:
        """``$set.messages``: the history was replaced (a clear or a compression)."""
        if not self.responses or self.last_context is None:
            return  # a session's own first context
        self.compactions.append(Compaction(self.last_context, None, len(self.responses), 0, stamp))
        self.segment += 1
        self.last_context = None

    def feed(self, record: dict[str, Any]) -> None:
        if "$set" in record:
            patch = record["$set"]
            if isinstance(patch, dict) and isinstance(patch.get("messages"), list):
                self.replaced(
                    patch.get("lastUpdated") if isinstance(patch.get("lastUpdated"), str) else None
                )
                for message in patch["messages"]:
                    if isinstance(message, dict):
                        self.message(message)
            return
        if "$rewindTo" in record:
            return  # the conversation loses its tail; the responses were billed
        if "projectHash" in record and "sessionId" in record:
            self.header(record)
            for message in record.get("messages") or ():  # the older one-object form
                if isinstance(message, dict):
                    self.message(message)
            return
        self.message(record)


def read_gemini(path: str | os.PathLike[str]) -> Transcript:
    """Everything the analyzer reads from one Gemini session file (a ``Transcript`` with
    ``format="gemini"``); a subagent's file (``chats/<parent>/<agent>.jsonl``) names its
    parent session. Raises :class:`~ctxrelay.errors.TranscriptError` for a file it cannot
    read."""
    name = os.fspath(path)
    try:
        data = Path(name).read_bytes()
    except OSError as exc:
        raise TranscriptError(name, exc.strerror or "unreadable") from None
    state = _Pass()
    lines = malformed = 0
    for line in data.splitlines():
        if not line.strip():
            continue
        lines += 1
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            malformed += 1
            continue
        if isinstance(record, dict):
            state.feed(record)
        else:
            malformed += 1
    if lines == 0:
        raise TranscriptError(name, "empty")
    parent = os.path.basename(os.path.dirname(name)) if state.kind == "subagent" else None
    return Transcript(
        path=name,
        session_id=state.session,
        version=None,
        responses=tuple(state.responses.values()),
        compactions=tuple(state.compactions),
        lines=lines,
        malformed_lines=malformed,
        size_bytes=len(data),
        models=tuple(state.models),
        format="gemini",
        parent_id=parent,
    )
