"""OpenCode's database (``docs/opencode-facts.md``): one SQLite file,
``~/.local/share/opencode/opencode.db``, that holds every session; the analyzer reads each
as its own :class:`~ctxrelay.transcripts.Transcript`.

The rules: each LLM step is its own assistant message, whose ``data`` JSON has the
step's ``tokens`` (``input`` is the prompt less the cached tokens, ``cache.read`` the
cached ones, ``cache.write`` the cache writes where the provider reports them,
``output`` less ``reasoning``), its ``cost`` as OpenCode priced it, ``modelID`` and
``time.created`` (milliseconds). A message whose counts are all zero sent nothing billed
(an aborted step) and is not a response. A compaction's summary is an assistant message
marked ``summary``: it is the summarizer's request, and the chain restarts after it.

The file is opened read-only (``mode=ro``): OpenCode keeps it in WAL mode, so it is read
while OpenCode runs and writes it, and nothing here can change it.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts._counts import as_count
from ctxrelay.transcripts._opencode_session import LOCK_WAIT_S
from ctxrelay.transcripts._records import Compaction, Response, Usage
from ctxrelay.transcripts._scan import Transcript

__all__ = ["LOCK_WAIT_S", "NOT_OPENCODE", "OpenCodeSession", "read_opencode"]

NOT_OPENCODE = "not an OpenCode database (it has no session and message tables)"


@dataclass(frozen=True, slots=True)
class OpenCodeSession:
    """One OpenCode session: its chain, and each compaction's summary request."""

    transcript: Transcript
    summaries: tuple[tuple[Response, ...], ...] = ()


def _iso(ms: Any) -> str | None:
    if not isinstance(ms, int | float) or isinstance(ms, bool):
        return None
    try:
        stamp = datetime.fromtimestamp(ms / 1000, UTC)
    except (OverflowError, OSError, ValueError):  # out of range: no time, not no read
        return None
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _usage(tokens: Any) -> Usage | None:
    """The :class:`Usage` of a message's ``tokens``; ``None`` when it has none or every
    count is zero."""
    if not isinstance(tokens, dict):
        return None
    cache = tokens.get("cache")
    cache = cache if isinstance(cache, dict) else {}
    usage = Usage(
        input_tokens=as_count(tokens.get("input")),
        cache_creation_input_tokens=as_count(cache.get("write")),
        cache_read_input_tokens=as_count(cache.get("read")),
        output_tokens=as_count(tokens.get("output")) + as_count(tokens.get("reasoning")),
    )
    return None if usage == Usage() else usage


def _rows(path: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The session rows and the message rows, in one read-only read."""
    uri = f"{Path(os.path.abspath(path)).as_uri()}?mode=ro"
    try:
        connection = sqlite3.connect(uri, uri=True, timeout=LOCK_WAIT_S)
    except sqlite3.Error as exc:
        raise TranscriptError(path, f"cannot open it read-only: {exc}") from None
    try:
        tables = {
            row[0]
            for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        if not {"session", "message"} <= tables:
            raise TranscriptError(path, NOT_OPENCODE)
        sessions = connection.execute(
            "SELECT id, directory, parent_id, version FROM session ORDER BY time_created, id"
        ).fetchall()
        messages = connection.execute(
            "SELECT session_id, id, time_created, data FROM message ORDER BY time_created, id"
        ).fetchall()
    except sqlite3.DatabaseError as exc:  # not SQLite, locked, another schema
        raise TranscriptError(path, f"cannot read it as OpenCode's database: {exc}") from None
    finally:
        connection.close()
    return sessions, messages


def _data(raw: Any) -> dict[str, Any]:
    try:
        data = json.loads(raw) if isinstance(raw, str | bytes) else None
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def read_opencode(path: str | os.PathLike[str]) -> list[OpenCodeSession]:
    """Every session of the OpenCode database at ``path``, in the order OpenCode created
    them (a session with no assistant message is still listed). Raises
    :class:`~ctxrelay.errors.TranscriptError` when the file is missing, cannot be opened
    read-only, is not SQLite, is locked, or has no OpenCode tables."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise TranscriptError(path, "no such file")
    sessions, messages = _rows(path)
    chains: dict[str, list[Response]] = {str(row[0]): [] for row in sessions}
    compactions: dict[str, list[Compaction]] = {key: [] for key in chains}
    summaries: dict[str, list[tuple[Response, ...]]] = {key: [] for key in chains}
    recorded: dict[str, float] = {}
    for session_id, message_id, created, raw in messages:
        key = str(session_id)
        data = _data(raw)
        if key not in chains or data.get("role") != "assistant":
            continue
        usage = _usage(data.get("tokens"))
        if usage is None:
            continue
        cost = data.get("cost")
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            recorded[key] = recorded.get(key, 0.0) + float(cost)
        times = data.get("time")
        model = data.get("modelID")
        response = Response(
            message_id=str(message_id),
            model=model if isinstance(model, str) and model else None,
            usage=usage,
            segment=len(compactions[key]),
            timestamp=_iso(times.get("created") if isinstance(times, dict) else None)
            or _iso(created),
        )
        if data.get("summary") is True:
            chain = chains[key]
            compactions[key].append(
                Compaction(
                    pre_tokens=chain[-1].context_tokens if chain else None,
                    trigger=None,  # manual or auto: its compaction part says; unread
                    after_requests=len(chain),
                    timestamp=response.timestamp,
                )
            )
            summaries[key].append((response,))
            continue
        chains[key].append(response)
    out = []
    for session_id, directory, parent_id, version in sessions:
        key = str(session_id)
        chain = chains[key]
        models = dict.fromkeys(r.model for r in chain if r.model)
        transcript = Transcript(
            path=path,
            session_id=key,
            version=version if isinstance(version, str) else None,
            responses=tuple(chain),
            compactions=tuple(compactions[key]),
            lines=len(chain) + len(summaries[key]),
            size_bytes=0,
            models=tuple(models),
            format="opencode",
            cwd=directory if isinstance(directory, str) and directory else None,
            parent_id=parent_id if isinstance(parent_id, str) and parent_id else None,
            recorded_cost_usd=recorded.get(key),
        )
        out.append(OpenCodeSession(transcript, tuple(summaries[key])))
    return out
