"""One OpenCode session read off its database (``docs/opencode-facts.md``, "The
database"), for the OpenCode host and ``session_history``: whether it started from a
handoff file (:func:`opencode_started`), and its conversation as text
(:func:`opencode_conversation`).

A session is named as a handoff chain link names a transcript: the database and the
session's id (:func:`~ctxrelay.transcripts._opencode_paths.session_locator`,
``/…/opencode.db#ses_…``). The database is opened read-only (``mode=ro``): OpenCode
keeps it in WAL mode and writes it while these read, and nothing here can change it.

The rules: each LLM step is one assistant ``message`` whose ``data.tokens`` are its
usage (``input`` the prompt less the cached tokens, ``cache.read`` the cached ones,
``cache.write`` the cache writes where the provider reports them); a step still
streaming has every count zero. A compaction's summary is an assistant message marked
``summary``. A message's pieces are its ``part`` rows, oldest first: ``text`` (a prompt's
or a reply's), ``tool`` (``tool``, ``callID``, ``state.input``, and once it ran
``state.output`` or, failed, ``state.error``); ``reasoning``, ``step-start``,
``step-finish``, ``compaction`` and the rest say nothing a later session searches for.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts._conversation import Message
from ctxrelay.transcripts._opencode_paths import split_locator

__all__ = [
    "LOCK_WAIT_S",
    "connect_readonly",
    "opencode_conversation",
    "opencode_started",
]

LOCK_WAIT_S = 2.0
"""How long a read waits for a lock held on the database before it gives up (in WAL
mode OpenCode's writes block no reader; an exclusive lock or a checkpoint that truncates
does, a checkpoint for milliseconds)."""

_ANSWERED = ("text", "tool")
"""Parts that come only from the model's response: a step whose counts are still zero
(its tool call running, in the first turn of a fresh session) has answered already."""


def connect_readonly(path: str) -> sqlite3.Connection:
    """The database at ``path`` opened read-only; a :class:`TranscriptError` when it
    cannot be."""
    if not os.path.isfile(path):
        raise TranscriptError(path, "no such file")
    uri = f"{Path(os.path.abspath(path)).as_uri()}?mode=ro"
    try:
        return sqlite3.connect(uri, uri=True, timeout=LOCK_WAIT_S)
    except sqlite3.Error as exc:
        raise TranscriptError(path, f"cannot open it read-only: {exc}") from None


def _data(raw: Any) -> dict[str, Any]:
    try:
        data = json.loads(raw) if isinstance(raw, str | bytes) else None
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _billed(tokens: Any) -> bool:
    """Whether a message's ``tokens`` count anything (a step still streaming has zeros)."""
    if not isinstance(tokens, dict):
        return False
    cache = tokens.get("cache")
    cache = cache if isinstance(cache, dict) else {}
    counts = (tokens.get("input"), tokens.get("output"), cache.get("read"), cache.get("write"))
    return any(_count(value) for value in counts)


def _query(locator: str, sql: str, *args: Any) -> list[tuple[Any, ...]] | None:
    """The rows of ``sql`` over the session ``locator`` names (its id the first
    parameter); ``None`` when it names none or the database cannot be read."""
    where = split_locator(locator)
    if where is None:
        return None
    database, session_id = where
    try:
        connection = connect_readonly(database)
    except TranscriptError:
        return None
    try:
        return connection.execute(sql, (session_id, *args)).fetchall()
    except sqlite3.DatabaseError:  # not SQLite, locked past the wait, another schema
        return None
    finally:
        connection.close()


def opencode_started(locator: str, path: Path) -> bool:
    """Whether the OpenCode session ``locator`` names has started from the handoff
    ``path``: a user message of it names the file, and a response after it is recorded
    (an assistant message with its tokens, or with a text or tool part of the response
    while its step still runs: a ``session_history`` call in the fresh session's first
    step). Killed before that response: not started."""
    rows = _query(
        locator,
        "SELECT m.time_created, m.id, m.data FROM part p JOIN message m ON m.id = p.message_id "
        "WHERE p.session_id = ? AND instr(p.data, ?) > 0 ORDER BY m.time_created, m.id",
        path.name,
    )
    named = [row for row in rows or () if _data(row[2]).get("role") == "user"]
    if not named:
        return False
    created, message_id, _ = named[0]
    after = _query(
        locator,
        "SELECT m.data, p.data FROM message m LEFT JOIN part p ON p.message_id = m.id "
        "WHERE m.session_id = ? AND (m.time_created > ? OR (m.time_created = ? AND m.id > ?))",
        created,
        created,
        message_id,
    )
    for message, part in after or ():
        data = _data(message)
        if data.get("role") != "assistant":
            continue
        if _billed(data.get("tokens")) or _data(part).get("type") in _ANSWERED:
            return True
    return False


def _pieces(role: str, part: dict[str, Any]) -> Iterator[Message]:
    kind = part.get("type")
    if kind == "text":
        text = part.get("text")
        if isinstance(text, str) and text.strip():
            yield Message("user" if role == "user" else "assistant", text)
    elif kind == "tool":
        state = part.get("state")
        state = state if isinstance(state, dict) else {}
        name, call_id = str(part.get("tool", "")), str(part.get("callID", ""))
        call = json.dumps(state.get("input"), ensure_ascii=False, sort_keys=True)
        yield Message("tool_call", call, name, call_id)
        status = state.get("status")
        if status in ("completed", "error"):
            value = state.get("output" if status == "completed" else "error")
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            yield Message("tool_result", text, call_id=call_id, is_error=status == "error")


def opencode_conversation(locator: str) -> Iterator[Message]:
    """The conversation of the OpenCode session ``locator`` names, oldest first: its
    prompts, replies, tool calls and results (nothing when the database cannot be read).
    A compaction changes nothing here: every message stays retrievable."""
    rows = _query(
        locator,
        "SELECT m.data, p.data FROM part p JOIN message m ON m.id = p.message_id "
        "WHERE p.session_id = ? ORDER BY m.time_created, m.id, p.id",
    )
    for message, part in rows or ():
        role = _data(message).get("role")
        if role in ("user", "assistant"):
            yield from _pieces(str(role), _data(part))
