"""The logic both SQL backends share: one implementation of the :class:`Store` contract
over a tiny dialect seam (placeholders, transactions, how text is stored).

Every mutation of a session first bumps that session's ``next_seq`` (an ``UPDATE`` that
takes the session row's write lock on PostgreSQL; SQLite serialises writers with
``BEGIN IMMEDIATE``), and only then looks at the window. So appends, claims, rollovers and
resets of one session are serialised, and a check made after the bump sees every commit
made before it: a claim is never granted twice and a sealed window never takes a row.
(PostgreSQL inserts a claim before the bump, see ``PostgresStore._claim``; the unique
key then does the serialising, and the window is still checked after the bump.)
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from ctxrelay.errors import (
    SessionInUseError,
    SessionNotFoundError,
    StaleWindowError,
    StoreError,
    WindowNotFoundError,
)
from ctxrelay.store._lease import hold_lease, holder_alive, this_host, this_node
from ctxrelay.store._protocol import (
    HISTORY_LINE_MAX_BYTES,
    HISTORY_RESULT_MAX_BYTES,
    HISTORY_ROWS_MAX,
    HISTORY_SCAN_MAX_BYTES,
    LEASE_TTL_S,
    ROW_KINDS,
    SEAL_REASONS,
    HistoryHit,
    Lease,
    NewRow,
    Row,
    SealReason,
    SessionInfo,
    WindowInfo,
)

__all__ = ["SCHEMA_VERSION", "SqlStore", "dump_json", "new_id"]

#: The schema this code writes; a database with a higher version is refused untouched.
#: 2 added ``ctx_leases`` (the session lease).
SCHEMA_VERSION = 2

#: Longest stage name a claim accepts (stages are policy names such as ``handoff``).
STAGE_MAX_CHARS = 64
#: Bytes of context kept before a search match in an excerpt.
EXCERPT_LEAD_BYTES = 256
#: Largest excerpt one search hit returns (the 16 KiB result bound still applies).
EXCERPT_MAX_BYTES = 2048

#: Rows fetched per page of a history search.
_SCAN_PAGE = 64
_SEQ_MAX = 2**62

_ROW_COLUMNS = "r.id, r.session_id, r.window_id, r.seq, r.kind, r.text, r.metadata, r.created_at"
# History reads never load a whole row text: column 5 only says whether it is NULL.
_HISTORY_COLUMNS = (
    "r.id, r.session_id, r.window_id, r.seq, r.kind, r.text IS NULL, r.metadata, r.created_at"
)
_WINDOW_COLUMNS = "id, session_id, idx, opened_at, sealed_at, seal_reason"
_SESSION_COLUMNS = "id, created_at, status, metadata"
_LEASE_COLUMNS = "token, host, pid, since, expires_at, node, label"
#: Longest pause between two looks at a held lease while waiting for it.
_LEASE_POLL_MAX_S = 0.05


def new_id() -> str:
    """A fresh, globally unique id (32 hex digits)."""
    return uuid.uuid4().hex


def dump_json(value: Mapping[str, Any], what: str) -> str:
    try:
        # NaN/Infinity are not JSON (PostgreSQL's json type rejects them): refuse on both.
        return json.dumps(
            dict(value), ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False
        )
    except (TypeError, ValueError) as exc:
        raise StoreError(f"the {what} is not JSON-serialisable: {exc}") from None


def _check_rows(rows: Sequence[NewRow]) -> None:
    for row in rows:
        if row.kind not in ROW_KINDS:
            raise StoreError(f"unknown row kind {row.kind!r}; expected one of {ROW_KINDS}")
        if row.text is not None and not isinstance(row.text, str):
            raise StoreError(f"row text must be a string or None, got {type(row.text).__name__}")


def _cut_utf8(data: bytes, start: int, size: int) -> tuple[str, int]:
    """``size`` bytes of ``data`` from ``start``, widened/narrowed to whole characters.

    Returns the text and the byte offset where it really starts."""
    # Move the start back to a character boundary (continuation bytes are 0b10xxxxxx).
    while 0 < start < len(data) and (data[start] & 0xC0) == 0x80:
        start -= 1
    chunk = data[start : start + size]
    return chunk.decode("utf-8", errors="ignore"), start


class SqlStore(ABC):
    """A :class:`ctxrelay.store.Store` over a DB-API connection; subclasses supply the
    dialect. Thread-safe: one lock serialises use of the connection."""

    #: ``?`` (SQLite) or ``%s`` (psycopg); SQL below is written with ``?``.
    placeholder = "?"
    #: Human name of the backend for messages and ``describe()``.
    backend = "sql"

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._sql_cache: dict[str, str] = {}
        self._pid = os.getpid()

    def _forked(self) -> bool:
        """True once in a child process that inherited this handle (then the backend opens
        its own connection: a database connection must never be shared across fork)."""
        if os.getpid() == self._pid:
            return False
        self._pid = os.getpid()
        return True

    def __enter__(self) -> SqlStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- dialect seam ---------------------------------------------------------------

    @abstractmethod
    def _write(self) -> AbstractContextManager[Any]:
        """A write transaction (commit on success, roll back on error) yielding a cursor."""

    @abstractmethod
    def _read(self) -> AbstractContextManager[Any]:
        """A read transaction (one consistent snapshot) yielding a cursor."""

    def _peek(self) -> AbstractContextManager[Any]:
        """A cursor for one single-statement read (no BEGIN/COMMIT round trips needed)."""
        return self._read()

    def _now(self, cur: Any) -> float:
        """The store's clock (Unix seconds), which decides whether a lease has lapsed:
        one clock for every worker of a shared store."""
        return time.time()

    def _text_param(self, text: str | None) -> Any:
        """How row text is bound (PostgreSQL stores it as UTF-8 ``bytea``: text may hold NUL)."""
        return text

    def _text_value(self, value: Any) -> str | None:
        if value is None or isinstance(value, str):
            return value
        return bytes(value).decode("utf-8")

    def _meta_value(self, value: Any) -> dict[str, Any]:
        if isinstance(value, str):
            loaded: dict[str, Any] = json.loads(value)
            return loaded
        return dict(value)

    #: SQL expression giving the first ``?`` bytes of ``r.text`` as bytes, and its length.
    text_head_sql = "substr(CAST(r.text AS BLOB), 1, ?)"
    text_bytes_sql = "length(CAST(r.text AS BLOB))"

    @staticmethod
    def _head_bytes(value: Any) -> bytes:
        """The fetched ``text_head_sql`` value as bytes.

        SQLite's ``substr`` of an empty blob is NULL, not an empty blob, so a row with
        ``text = ''`` (a tool-call-only assistant response) comes back as ``None``.
        """
        return b"" if value is None else bytes(value)

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def describe(self) -> str:
        """Where the store lives, without secrets (for messages and the CLI)."""

    # ---- helpers ----------------------------------------------------------------------

    def _q(self, sql: str) -> str:
        """Translate ``?`` placeholders for the dialect (cached: statements are reused)."""
        out = self._sql_cache.get(sql)
        if out is None:
            out = sql if self.placeholder == "?" else sql.replace("?", self.placeholder)
            self._sql_cache[sql] = out
        return out

    def _session(self, raw: Any) -> SessionInfo:
        return SessionInfo(
            id=raw[0], created_at=float(raw[1]), status=raw[2], metadata=self._meta_value(raw[3])
        )

    @staticmethod
    def _window(raw: Any) -> WindowInfo:
        return WindowInfo(
            id=raw[0],
            session_id=raw[1],
            index=int(raw[2]),
            opened_at=float(raw[3]),
            sealed_at=None if raw[4] is None else float(raw[4]),
            seal_reason=raw[5],
        )

    def _row(self, raw: Any) -> Row:
        return self._history_row(raw, self._text_value(raw[5]), None)

    def _history_row(self, raw: Any, text: str | None, text_bytes: int | None) -> Row:
        return Row(
            id=int(raw[0]),
            session_id=raw[1],
            window_id=raw[2],
            seq=int(raw[3]),
            kind=raw[4],
            text=text,
            metadata=self._meta_value(raw[6]),
            created_at=float(raw[7]),
            text_bytes=text_bytes,
        )

    def _bump(self, cur: Any, session_id: str, count: int, now: float) -> int:
        """Reserve ``count`` sequence numbers; returns the first. Takes the session lock."""
        cur.execute(
            self._q(
                "UPDATE ctx_sessions SET next_seq = next_seq + ?, updated_at = ? "
                "WHERE id = ? RETURNING next_seq"
            ),
            (count, now, session_id),
        )
        got = cur.fetchone()
        if got is None:
            raise SessionNotFoundError(session_id)
        return int(got[0]) - count

    def _open_window(self, cur: Any, session_id: str, window_id: str) -> int:
        """The index of ``window_id`` if it is the session's open window, else raise."""
        cur.execute(
            self._q("SELECT session_id, idx, seal_reason FROM ctx_windows WHERE id = ?"),
            (window_id,),
        )
        got = cur.fetchone()
        if got is None or got[0] != session_id:
            raise StaleWindowError(window_id, "it is not a window of this session")
        if got[2] is not None:
            raise StaleWindowError(window_id, f"it was sealed ({got[2]})")
        return int(got[1])

    def _insert_rows(
        self,
        cur: Any,
        session_id: str,
        window_id: str,
        seq: int,
        rows: Sequence[NewRow],
        *,
        now: float,
    ) -> list[Row]:
        sql = self._q(
            "INSERT INTO ctx_rows (session_id, window_id, seq, kind, text, metadata, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id"
        )
        out: list[Row] = []
        for offset, row in enumerate(rows):
            meta = dump_json(row.metadata, "row metadata")
            cur.execute(
                sql,
                (
                    session_id,
                    window_id,
                    seq + offset,
                    row.kind,
                    self._text_param(row.text),
                    meta,
                    now,
                ),
            )
            row_id = int(cur.fetchone()[0])
            out.append(
                Row(
                    id=row_id,
                    session_id=session_id,
                    window_id=window_id,
                    seq=seq + offset,
                    kind=row.kind,
                    text=row.text,
                    metadata=json.loads(meta),
                    created_at=now,
                )
            )
        return out

    def _insert_window(self, cur: Any, session_id: str, index: int, now: float) -> WindowInfo:
        window = WindowInfo(id=new_id(), session_id=session_id, index=index, opened_at=now)
        cur.execute(
            self._q("INSERT INTO ctx_windows (id, session_id, idx, opened_at) VALUES (?, ?, ?, ?)"),
            (window.id, session_id, index, now),
        )
        return window

    def _seal(self, cur: Any, window_id: str, reason: SealReason, now: float) -> None:
        cur.execute(
            self._q("UPDATE ctx_windows SET sealed_at = ?, seal_reason = ? WHERE id = ?"),
            (now, reason, window_id),
        )

    def _floor(self, cur: Any, session_id: str) -> int:
        """Index of the newest manually reset window (0 when none): the privacy floor."""
        cur.execute(
            self._q(
                "SELECT COALESCE(MAX(idx), 0) FROM ctx_windows "
                "WHERE session_id = ? AND seal_reason = 'manual_reset'"
            ),
            (session_id,),
        )
        return int(cur.fetchone()[0])

    def _require_session(self, cur: Any, session_id: str) -> None:
        cur.execute(self._q("SELECT 1 FROM ctx_sessions WHERE id = ?"), (session_id,))
        if cur.fetchone() is None:
            raise SessionNotFoundError(session_id)

    # ---- sessions ---------------------------------------------------------------------

    def create_session(
        self, *, metadata: Mapping[str, Any] | None = None, session_id: str | None = None
    ) -> SessionInfo:
        sid = new_id() if session_id is None else session_id
        if not isinstance(sid, str) or not sid or len(sid) > 200:
            raise StoreError("a session id must be a non-empty string of at most 200 characters")
        meta = dump_json(metadata or {}, "session metadata")
        now = time.time()
        with self._lock, self._write() as cur:
            cur.execute(self._q("SELECT 1 FROM ctx_sessions WHERE id = ?"), (sid,))
            if cur.fetchone() is not None:
                raise StoreError(f"a session {sid!r} already exists in this store")
            cur.execute(
                self._q(
                    "INSERT INTO ctx_sessions (id, created_at, updated_at, status, metadata, "
                    "next_seq) VALUES (?, ?, ?, 'running', ?, 1)"
                ),
                (sid, now, now, meta),
            )
            self._insert_window(cur, sid, 1, now)
        return SessionInfo(id=sid, created_at=now, status="running", metadata=json.loads(meta))

    def get_session(self, session_id: str) -> SessionInfo:
        with self._lock, self._peek() as cur:
            cur.execute(
                self._q(f"SELECT {_SESSION_COLUMNS} FROM ctx_sessions WHERE id = ?"),
                (session_id,),
            )
            got = cur.fetchone()
        if got is None:
            raise SessionNotFoundError(session_id)
        return self._session(got)

    def list_sessions(self, *, limit: int = 100) -> list[SessionInfo]:
        with self._lock, self._peek() as cur:
            cur.execute(
                self._q(
                    f"SELECT {_SESSION_COLUMNS} FROM ctx_sessions "
                    "ORDER BY created_at DESC, id DESC LIMIT ?"
                ),
                (max(0, int(limit)),),
            )
            return [self._session(raw) for raw in cur.fetchall()]

    def update_session(
        self,
        session_id: str,
        *,
        status: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> SessionInfo:
        with self._lock, self._write() as cur:
            # Lock the session row first (like every mutation), then merge.
            now = time.time()
            self._bump(cur, session_id, 0, now)
            cur.execute(
                self._q(f"SELECT {_SESSION_COLUMNS} FROM ctx_sessions WHERE id = ?"),
                (session_id,),
            )
            current = self._session(cur.fetchone())
            merged = dict(current.metadata)
            if metadata:
                merged.update(metadata)
            new_status = current.status if status is None else status
            meta = dump_json(merged, "session metadata")
            cur.execute(
                self._q("UPDATE ctx_sessions SET status = ?, metadata = ? WHERE id = ?"),
                (new_status, meta, session_id),
            )
        return SessionInfo(
            id=session_id,
            created_at=current.created_at,
            status=new_status,
            metadata=json.loads(meta),
        )

    # ---- windows ----------------------------------------------------------------------

    def windows(self, session_id: str) -> list[WindowInfo]:
        with self._lock, self._read() as cur:
            cur.execute(
                self._q(
                    f"SELECT {_WINDOW_COLUMNS} FROM ctx_windows WHERE session_id = ? ORDER BY idx"
                ),
                (session_id,),
            )
            found = [self._window(raw) for raw in cur.fetchall()]
            if not found:
                self._require_session(cur, session_id)
        return found

    def current_window(self, session_id: str) -> WindowInfo:
        with self._lock, self._peek() as cur:
            cur.execute(
                self._q(
                    f"SELECT {_WINDOW_COLUMNS} FROM ctx_windows WHERE session_id = ? "
                    "ORDER BY idx DESC LIMIT 1"
                ),
                (session_id,),
            )
            got = cur.fetchone()
        if got is None:
            raise SessionNotFoundError(session_id)
        return self._window(got)

    def rollover(
        self,
        session_id: str,
        window_id: str,
        reason: SealReason,
        *,
        boundary: NewRow,
        opening: Sequence[NewRow],
    ) -> WindowInfo:
        if reason not in SEAL_REASONS:
            raise StoreError(f"unknown seal reason {reason!r}; expected one of {SEAL_REASONS}")
        opening = list(opening)
        _check_rows([boundary, *opening])
        now = time.time()
        with self._lock, self._write() as cur:
            seq = self._bump(cur, session_id, 1 + len(opening), now)
            index = self._open_window(cur, session_id, window_id)
            self._insert_rows(cur, session_id, window_id, seq, [boundary], now=now)
            self._seal(cur, window_id, reason, now)
            window = self._insert_window(cur, session_id, index + 1, now)
            self._insert_rows(cur, session_id, window.id, seq + 1, opening, now=now)
        return window

    def reset(self, session_id: str, *, opening: Sequence[NewRow] = ()) -> WindowInfo:
        opening = list(opening)
        _check_rows(opening)
        now = time.time()
        with self._lock, self._write() as cur:
            seq = self._bump(cur, session_id, len(opening), now)
            cur.execute(
                self._q(
                    "SELECT id, idx FROM ctx_windows WHERE session_id = ? AND seal_reason IS NULL "
                    "ORDER BY idx DESC LIMIT 1"
                ),
                (session_id,),
            )
            got = cur.fetchone()
            if got is None:  # cannot happen through this API; repair rather than fail
                cur.execute(
                    self._q("SELECT COALESCE(MAX(idx), 0) FROM ctx_windows WHERE session_id = ?"),
                    (session_id,),
                )
                index = int(cur.fetchone()[0])
            else:
                index = int(got[1])
                self._seal(cur, got[0], "manual_reset", now)
            window = self._insert_window(cur, session_id, index + 1, now)
            self._insert_rows(cur, session_id, window.id, seq, opening, now=now)
        return window

    # ---- rows -------------------------------------------------------------------------

    def append(self, session_id: str, window_id: str, rows: Sequence[NewRow]) -> list[Row]:
        rows = list(rows)
        if not rows:
            return []
        _check_rows(rows)
        now = time.time()
        with self._lock, self._write() as cur:
            seq = self._bump(cur, session_id, len(rows), now)
            self._open_window(cur, session_id, window_id)
            return self._insert_rows(cur, session_id, window_id, seq, rows, now=now)

    def append_advisory(
        self, session_id: str, window_id: str, stage: str, row: NewRow
    ) -> Row | None:
        if not isinstance(stage, str) or not stage or len(stage) > STAGE_MAX_CHARS:
            raise StoreError(f"a stage must be a non-empty name of at most {STAGE_MAX_CHARS} chars")
        _check_rows([row])
        now = time.time()
        try:
            return self._claim(session_id, window_id, stage, row, now)
        except _AlreadyClaimed:
            return None

    def _claim(self, session_id: str, window_id: str, stage: str, row: NewRow, now: float) -> Row:
        # Claims are never removed, so a committed claim seen without the session lock is
        # final: a loser returns at once instead of queueing behind the winner's lock.
        with self._lock, self._peek() as cur:
            cur.execute(
                self._q("SELECT 1 FROM ctx_claims WHERE window_id = ? AND stage = ?"),
                (window_id, stage),
            )
            if cur.fetchone() is not None:
                raise _AlreadyClaimed
        with self._lock, self._write() as cur:
            seq = self._bump(cur, session_id, 1, now)
            cur.execute(
                self._q("SELECT 1 FROM ctx_claims WHERE window_id = ? AND stage = ?"),
                (window_id, stage),
            )
            if cur.fetchone() is not None:
                raise _AlreadyClaimed
            self._open_window(cur, session_id, window_id)
            (written,) = self._insert_rows(cur, session_id, window_id, seq, [row], now=now)
            cur.execute(
                self._q(
                    "INSERT INTO ctx_claims (window_id, stage, row_id, created_at) "
                    "VALUES (?, ?, ?, ?)"
                ),
                (window_id, stage, written.id, now),
            )
        return written

    def claims(self, window_id: str) -> frozenset[str]:
        with self._lock, self._peek() as cur:
            cur.execute(self._q("SELECT stage FROM ctx_claims WHERE window_id = ?"), (window_id,))
            return frozenset(raw[0] for raw in cur.fetchall())

    def rows(
        self,
        session_id: str,
        *,
        window_id: str | None = None,
        after_seq: int = 0,
        limit: int | None = None,
    ) -> list[Row]:
        sql = f"SELECT {_ROW_COLUMNS} FROM ctx_rows r WHERE r.session_id = ? AND r.seq > ?"
        params: list[Any] = [session_id, int(after_seq)]
        if window_id is not None:
            sql += " AND r.window_id = ?"
            params.append(window_id)
        sql += " ORDER BY r.seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(max(0, int(limit)))
        with self._lock, self._read() as cur:
            cur.execute(self._q(sql), tuple(params))
            found = [self._row(raw) for raw in cur.fetchall()]
            if not found:
                self._require_session(cur, session_id)
        return found

    # ---- session_history ----------------------------------------------------------------

    def history_windows(self, session_id: str) -> list[WindowInfo]:
        with self._lock, self._read() as cur:
            self._require_session(cur, session_id)
            floor = self._floor(cur, session_id)
            # The newest windows when there are more than the row bound.
            cur.execute(
                self._q(
                    f"SELECT {_WINDOW_COLUMNS} FROM ctx_windows WHERE session_id = ? AND idx > ? "
                    "ORDER BY idx DESC LIMIT ?"
                ),
                (session_id, floor, HISTORY_ROWS_MAX),
            )
            return [self._window(raw) for raw in reversed(cur.fetchall())]

    def history_search(self, session_id: str, query: str, *, limit: int = 20) -> list[HistoryHit]:
        if not query.strip():
            raise StoreError("a history search needs a non-empty query")
        pattern = re.compile(re.escape(query), re.IGNORECASE)
        limit = max(1, min(int(limit), HISTORY_ROWS_MAX))
        hits: list[HistoryHit] = []
        budget = HISTORY_RESULT_MAX_BYTES
        scanned = 0
        sql = self._q(
            f"SELECT {_HISTORY_COLUMNS}, w.idx, {self.text_head_sql}, {self.text_bytes_sql} "
            "FROM ctx_rows r JOIN ctx_windows w ON w.id = r.window_id "
            "WHERE r.session_id = ? AND w.idx > ? AND r.text IS NOT NULL AND r.seq < ? "
            f"ORDER BY r.seq DESC LIMIT {_SCAN_PAGE}"
        )
        with self._lock, self._read() as cur:
            self._require_session(cur, session_id)
            floor = self._floor(cur, session_id)
            before = _SEQ_MAX
            # Newest first, one small page at a time: the scan bound caps the work, never
            # the size of the session.
            while scanned <= HISTORY_SCAN_MAX_BYTES and budget > 0 and len(hits) < limit:
                cur.execute(sql, (HISTORY_LINE_MAX_BYTES, session_id, floor, before))
                page = cur.fetchall()
                if not page:
                    break
                before = int(page[-1][3])
                for raw in page:
                    head = self._head_bytes(raw[9])
                    scanned += len(head)
                    if scanned > HISTORY_SCAN_MAX_BYTES:
                        break
                    text = head.decode("utf-8", errors="ignore")
                    found = pattern.search(text)
                    if found is None:
                        continue
                    # An excerpt around the match, in bytes of the (possibly long) text.
                    match_byte = len(text[: found.start()].encode("utf-8"))
                    total = int(raw[10])
                    size = min(EXCERPT_MAX_BYTES, budget)
                    start = max(0, match_byte - min(EXCERPT_LEAD_BYTES, size // 4))
                    excerpt, start = _cut_utf8(head, start, size)
                    used = len(excerpt.encode("utf-8"))
                    whole = start == 0 and used == total
                    row = self._history_row(raw, excerpt, None if whole else total)
                    hits.append(HistoryHit(window_index=int(raw[8]), row=row, excerpt_start=start))
                    budget -= used
                    if len(hits) >= limit or budget <= 0:
                        break
        return hits

    def history_read(
        self, session_id: str, window_index: int, *, offset: int = 0, limit: int = 50
    ) -> list[Row]:
        limit = max(1, min(int(limit), HISTORY_ROWS_MAX))
        offset = max(0, int(offset))
        out: list[Row] = []
        budget = HISTORY_RESULT_MAX_BYTES
        with self._lock, self._read() as cur:
            self._require_session(cur, session_id)
            floor = self._floor(cur, session_id)
            cur.execute(
                self._q("SELECT id FROM ctx_windows WHERE session_id = ? AND idx = ?"),
                (session_id, int(window_index)),
            )
            got = cur.fetchone()
            if got is None or int(window_index) <= floor:
                raise WindowNotFoundError(session_id, int(window_index))
            cur.execute(
                self._q(
                    f"SELECT {_HISTORY_COLUMNS}, {self.text_head_sql}, {self.text_bytes_sql} "
                    "FROM ctx_rows r WHERE r.window_id = ? ORDER BY r.seq LIMIT ? OFFSET ?"
                ),
                (min(HISTORY_LINE_MAX_BYTES, HISTORY_RESULT_MAX_BYTES), got[0], limit, offset),
            )
            for raw in cur.fetchall():
                if raw[5]:  # text IS NULL
                    out.append(self._history_row(raw, None, None))
                    continue
                if budget <= 0:
                    break
                head = self._head_bytes(raw[8])
                total = int(raw[9])
                text, _ = _cut_utf8(head, 0, budget)
                used = len(text.encode("utf-8"))
                budget -= used
                out.append(self._history_row(raw, text, None if used == total else total))
        return out

    # ---- the session lease ---------------------------------------------------------------

    def _lease_row(self, session_id: str, raw: Any) -> Lease:
        return Lease(
            session_id=session_id,
            token=raw[0],
            host=raw[1],
            pid=int(raw[2]),
            since=float(raw[3]),
            expires_at=float(raw[4]),
            node=raw[5],
            label=raw[6],
        )

    def _held(self, cur: Any, session_id: str) -> Lease | None:
        cur.execute(
            self._q(f"SELECT {_LEASE_COLUMNS} FROM ctx_leases WHERE session_id = ?"),
            (session_id,),
        )
        got = cur.fetchone()
        return None if got is None else self._lease_row(session_id, got)

    def _lock_session(self, cur: Any, session_id: str) -> None:
        """Serialise with the session's other mutations (a row lock on PostgreSQL) without
        changing the session."""
        cur.execute(
            self._q("UPDATE ctx_sessions SET next_seq = next_seq WHERE id = ? RETURNING id"),
            (session_id,),
        )
        if cur.fetchone() is None:
            raise SessionNotFoundError(session_id)

    def _try_lease(self, session_id: str, ttl: float, label: str) -> tuple[Lease, bool]:
        """``(our new lease, True)``, or ``(the live holder's lease, False)``."""
        with self._lock, self._write() as cur:
            self._lock_session(cur, session_id)
            now = self._now(cur)
            held = self._held(cur, session_id)
            if held is not None:
                if holder_alive(held, now):
                    return held, False
                cur.execute(self._q("DELETE FROM ctx_leases WHERE session_id = ?"), (session_id,))
            lease = Lease(
                session_id=session_id,
                token=new_id(),
                host=this_host(),
                pid=os.getpid(),
                since=now,
                expires_at=now + ttl,
                node=this_node(),
                label=label,
            )
            cur.execute(
                self._q(
                    f"INSERT INTO ctx_leases (session_id, {_LEASE_COLUMNS}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                ),
                (
                    session_id,
                    lease.token,
                    lease.host,
                    lease.pid,
                    lease.since,
                    lease.expires_at,
                    lease.node,
                    lease.label,
                ),
            )
        return lease, True

    def acquire_lease(
        self,
        session_id: str,
        *,
        ttl: float = LEASE_TTL_S,
        timeout: float = 0.0,
        label: str = "",
    ) -> Lease:
        if not ttl > 0:
            raise StoreError(f"a lease's ttl must be a positive number of seconds, not {ttl!r}")
        deadline = time.monotonic() + max(0.0, timeout)
        pause = 0.002
        while True:
            got, ours = self._try_lease(session_id, ttl, label)
            if ours:
                return got
            left = deadline - time.monotonic()
            if left <= 0:
                mine = got.pid == os.getpid() and got.node == this_node()
                raise SessionInUseError(
                    session_id, got.holder, got.since, got.expires_at, mine=mine
                )
            time.sleep(min(pause, left))
            pause = min(pause * 2, _LEASE_POLL_MAX_S)

    def renew_lease(self, lease: Lease, *, ttl: float = LEASE_TTL_S) -> Lease:
        session_id = lease.session_id
        with self._lock, self._write() as cur:
            self._lock_session(cur, session_id)
            now = self._now(cur)
            held = self._held(cur, session_id)
            if held is None or held.token != lease.token:
                holder = "another run" if held is None else held.holder
                since = now if held is None else held.since
                until = now if held is None else held.expires_at
                raise SessionInUseError(session_id, holder, since, until, lost=True)
            cur.execute(
                self._q("UPDATE ctx_leases SET expires_at = ? WHERE session_id = ? AND token = ?"),
                (now + ttl, session_id, lease.token),
            )
        return Lease(
            session_id=session_id,
            token=held.token,
            host=held.host,
            pid=held.pid,
            since=held.since,
            expires_at=now + ttl,
            node=held.node,
            label=held.label,
        )

    def release_lease(self, lease: Lease) -> None:
        with self._lock, self._write() as cur:
            cur.execute(
                self._q("DELETE FROM ctx_leases WHERE session_id = ? AND token = ?"),
                (lease.session_id, lease.token),
            )

    def lease(self, session_id: str) -> Lease | None:
        with self._lock, self._read() as cur:
            self._require_session(cur, session_id)
            held = self._held(cur, session_id)
            now = self._now(cur)
        return held if held is not None and holder_alive(held, now) else None

    @contextmanager
    def _dispatch(self, session_id: str, timeout: float) -> Iterator[None]:
        holding = hold_lease(self, session_id, timeout=timeout, label="dispatch")
        try:
            yield
        finally:
            holding.release()

    def dispatch_lock(
        self, session_id: str, *, timeout: float = 0.0
    ) -> AbstractContextManager[None]:
        return self._dispatch(session_id, timeout)


class _AlreadyClaimed(Exception):
    """Internal: the stage was claimed; the write transaction rolls back."""
