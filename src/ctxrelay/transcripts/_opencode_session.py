"""One OpenCode session read off its database (``docs/opencode-facts.md``, "The
database"), for the OpenCode host and ``session_history``: the context now
(:func:`opencode_context`), whether it started from a handoff file
(:func:`opencode_started`), and its conversation as text (:func:`opencode_conversation`).

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
from typing import Any, NamedTuple

from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts._conversation import Message
from ctxrelay.transcripts._opencode_paths import split_locator

__all__ = [
    "LOCK_WAIT_S",
    "OpenCodeContext",
    "connect_readonly",
    "opencode_context",
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

_RECENT = 64
"""Most messages read back from a session's newest for its context (a step writes one)."""


class OpenCodeContext(NamedTuple):
    """The newest response of an OpenCode session."""

    context_tokens: int
    """Its prompt's tokens (``input + cache.read + cache.write``): the context the next
    request starts from, less that response's own output."""
    total_tokens: int
    """OpenCode's ``tokens.total`` of it (prompt and output): what its own
    auto-compaction compares with the usable limit."""
    model: str | None
    provider: str | None
    message_id: str


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


def _prompt(tokens: Any) -> tuple[int, int]:
    """A message's prompt tokens and its ``total``; ``(0, 0)`` when it has none."""
    if not isinstance(tokens, dict):
        return 0, 0
    cache = tokens.get("cache")
    cache = cache if isinstance(cache, dict) else {}
    prompt = _count(tokens.get("input")) + _count(cache.get("read")) + _count(cache.get("write"))
    output = _count(tokens.get("output")) + _count(tokens.get("reasoning"))
    return prompt, max(_count(tokens.get("total")), prompt + output)


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


def opencode_context(locator: str) -> OpenCodeContext | None:
    """The context of the OpenCode session ``locator`` names now (:class:`OpenCodeContext`);
    ``None`` when it has no response yet, its newest is a compaction's summary (the
    context after it is known at the next response), or the database cannot be read."""
    rows = _query(
        locator,
        "SELECT id, data FROM message WHERE session_id = ? "
        "ORDER BY time_created DESC, id DESC LIMIT ?",
        _RECENT,
    )
    for message_id, raw in rows or ():
        data = _data(raw)
        if data.get("role") != "assistant":
            continue
        prompt, total = _prompt(data.get("tokens"))
        if prompt == 0:
            continue  # still streaming, or aborted: nothing sent back
        if data.get("summary") is True:
            return None
        model, provider = data.get("modelID"), data.get("providerID")
        return OpenCodeContext(
            prompt,
            total,
            model if isinstance(model, str) and model else None,
            provider if isinstance(provider, str) and provider else None,
            str(message_id),
        )
    return None


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
        if _prompt(data.get("tokens"))[0] > 0 or _data(part).get("type") in _ANSWERED:
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
