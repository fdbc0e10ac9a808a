"""The PostgreSQL backend (psycopg 3, extra ``postgres``): many workers, many sessions.

- Every method is one transaction on one connection (autocommit off only inside
  ``conn.transaction()``); statements are prepared on first use.
- Mutations of a session serialise on its ``ctx_sessions`` row (the ``next_seq`` bump is
  an ``UPDATE``, a row lock held to commit); checks made after it read committed state, so
  a claim is granted once and a sealed window never takes a row.
- The dispatch lock is a session-level advisory lock (``pg_try_advisory_lock``) held on a
  connection of its own; the server drops it when the holder's connection dies.
- Row text is ``bytea`` (UTF-8): PostgreSQL ``text`` cannot hold NUL, tool output can.
  Metadata is ``json`` (``jsonb`` rejects ``\\u0000``).
- Tables are created in the connection's current schema, so ``?options=-csearch_path%3Dx``
  in the URL puts a store in schema ``x``.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from ctxrelay.errors import (
    MissingExtraError,
    SessionBusyError,
    StoreError,
    StoreUnavailableError,
    UnsupportedSchemaError,
)
from ctxrelay.store._base import SCHEMA_VERSION, SqlStore, _AlreadyClaimed

try:
    import psycopg
    from psycopg import errors as pg_errors
    from psycopg.conninfo import conninfo_to_dict
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise MissingExtraError("the PostgreSQL store", "postgres") from exc

if TYPE_CHECKING:
    from psycopg import Connection

__all__ = ["CONNECT_TIMEOUT_S", "PostgresStore"]

#: Seconds to wait for a server before saying it is down (unless the URL sets its own).
CONNECT_TIMEOUT_S = 5
#: Namespace (first key) of the two-key advisory lock that serialises migrations.
_MIGRATE_LOCK_CLASS = 0x63747872

_KINDS = "'user','assistant','tool_call','tool_result','warning','boundary','lead_in','flush'"
_REASONS = "'new_context','forced','emergency','manual_reset','legacy_flush'"

MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE ctx_sessions (
            id text PRIMARY KEY,
            created_at double precision NOT NULL,
            updated_at double precision NOT NULL,
            status text NOT NULL,
            metadata json NOT NULL,
            next_seq bigint NOT NULL
        )""",
        "CREATE INDEX ctx_sessions_created ON ctx_sessions (created_at)",
        f"""CREATE TABLE ctx_windows (
            id text PRIMARY KEY,
            session_id text NOT NULL REFERENCES ctx_sessions (id),
            idx integer NOT NULL,
            opened_at double precision NOT NULL,
            sealed_at double precision,
            seal_reason text CHECK (seal_reason IN ({_REASONS})),
            UNIQUE (session_id, idx)
        )""",
        f"""CREATE TABLE ctx_rows (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            session_id text NOT NULL REFERENCES ctx_sessions (id),
            window_id text NOT NULL REFERENCES ctx_windows (id),
            seq bigint NOT NULL,
            kind text NOT NULL CHECK (kind IN ({_KINDS})),
            text bytea,
            metadata json NOT NULL,
            created_at double precision NOT NULL,
            UNIQUE (session_id, seq)
        )""",
        "CREATE INDEX ctx_rows_window ON ctx_rows (window_id, seq)",
        """CREATE TABLE ctx_claims (
            window_id text NOT NULL REFERENCES ctx_windows (id),
            stage text NOT NULL,
            row_id bigint NOT NULL REFERENCES ctx_rows (id),
            created_at double precision NOT NULL,
            PRIMARY KEY (window_id, stage)
        )""",
    ),
}
assert max(MIGRATIONS) == SCHEMA_VERSION


def _where(url: str) -> tuple[str, str, str]:
    """(host:port/dbname, user, label) of a URL, never its password."""
    try:
        info = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        raise StoreUnavailableError(
            "the PostgreSQL URL cannot be parsed; expected postgresql://user:password@host:port/db"
        ) from None
    host = str(info.get("host") or "localhost")
    port = str(info.get("port") or "5432")
    user = str(info.get("user") or "")
    dbname = str(info.get("dbname") or user or "")
    return f"{host}:{port}/{dbname}", user, f"postgresql://{host}:{port}/{dbname}"


def _reason(exc: BaseException, user: str) -> str:
    text = str(exc)
    lowered = text.lower()
    if "password authentication failed" in lowered or "no password supplied" in lowered:
        return f"the server refused the login of user {user!r}"
    if "authentication failed" in lowered or "no pg_hba.conf entry" in lowered:
        return f"the server refused the login of user {user!r}"
    if "connection refused" in lowered:
        return "no server is listening there (is PostgreSQL running?)"
    if "timeout" in lowered or "timed out" in lowered:
        return "the server did not answer in time"
    if "does not exist" in lowered:
        for line in text.splitlines():
            if "does not exist" in line:
                return line.split("FATAL:", 1)[-1].strip().rstrip(".")
    if "could not translate host name" in lowered:
        return "the host name does not resolve"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1].rstrip(".") if lines else type(exc).__name__


class PostgresStore(SqlStore):
    """A :class:`ctxrelay.store.Store` in a PostgreSQL database."""

    backend = "postgresql"
    placeholder = "%s"
    text_head_sql = "substring(r.text from 1 for ?)"
    text_bytes_sql = "octet_length(r.text)"

    def __init__(self, url: str, *, create: bool = True) -> None:
        super().__init__()
        self._url = url
        self._where, self._user, self._label = _where(url)
        self._idle_lock_conns: list[Connection[Any]] = []
        self._lock_conns_guard = threading.Lock()
        self._conn = self._connect()
        try:
            self._schema = str(self._conn.execute("SELECT current_schema()").fetchone()[0])  # type: ignore[index]
            self._migrate(create)
        except psycopg.Error as exc:
            self._conn.close()
            raise self._error(exc) from None
        except BaseException:
            self._conn.close()
            raise

    def describe(self) -> str:
        return self._label

    # ---- connections --------------------------------------------------------------------

    def _connect(self) -> Connection[Any]:
        kwargs: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0}
        if "connect_timeout" not in self._url:
            kwargs["connect_timeout"] = CONNECT_TIMEOUT_S
        try:
            return psycopg.connect(self._url, **kwargs)
        except psycopg.Error as exc:
            raise StoreUnavailableError(
                f"cannot open the PostgreSQL store at {self._where}: {_reason(exc, self._user)}"
            ) from None

    def _error(self, exc: psycopg.Error) -> StoreError:
        if isinstance(exc, psycopg.OperationalError):
            return StoreError(
                f"lost the connection to the PostgreSQL store at {self._where}: "
                f"{_reason(exc, self._user)}; nothing uncommitted was kept"
            )
        diag = getattr(exc, "diag", None)
        message = getattr(diag, "message_primary", None) or str(exc).strip()
        return StoreError(f"the PostgreSQL store at {self._where} failed: {message}")

    def _live(self) -> Connection[Any]:
        """The main connection, reconnected if a previous call found it broken."""
        if self._conn.closed or self._conn.broken:
            self._conn = self._connect()
        return self._conn

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        conn = self._live()
        try:
            with conn.transaction(), conn.cursor() as cur:
                yield cur
        except pg_errors.UniqueViolation as exc:
            if exc.diag.table_name == "ctx_claims":  # lost a claim race: same as claimed
                raise _AlreadyClaimed from None
            raise self._error(exc) from None
        except psycopg.Error as exc:
            raise self._error(exc) from None

    def _write(self) -> AbstractContextManager[Any]:
        return self._transaction()

    def _read(self) -> AbstractContextManager[Any]:
        return self._transaction()

    def _text_param(self, text: str | None) -> Any:
        if text is None:
            return None
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            raise StoreError("row text is not valid Unicode (it holds a lone surrogate)") from None

    def _migrate(self, create: bool) -> None:
        conn = self._conn
        # Look first, read-only: a newer schema is refused before anything is written.
        version = self._version(conn)
        if version > SCHEMA_VERSION:
            raise UnsupportedSchemaError(version, SCHEMA_VERSION)
        if version == SCHEMA_VERSION:
            return
        if version == 0 and not create:
            raise StoreUnavailableError(
                f"there is no ctxrelay store in the PostgreSQL database at {self._where}"
            )
        with conn.transaction():
            conn.execute(
                "SELECT pg_advisory_xact_lock(%s, hashtext(current_schema()))",
                (_MIGRATE_LOCK_CLASS,),
            )
            version = self._version(conn)  # another worker may have migrated meanwhile
            if version > SCHEMA_VERSION:
                raise UnsupportedSchemaError(version, SCHEMA_VERSION)
            if version == 0:
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS ctx_schema "
                    "(version integer NOT NULL, applied_at double precision NOT NULL)"
                )
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[target]:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO ctx_schema (version, applied_at) VALUES (%s, %s)",
                    (target, time.time()),
                )

    @staticmethod
    def _version(conn: Connection[Any]) -> int:
        exists = conn.execute("SELECT to_regclass('ctx_schema') IS NOT NULL").fetchone()
        if not exists or not exists[0]:
            return 0
        got = conn.execute("SELECT MAX(version) FROM ctx_schema").fetchone()
        return int(got[0] or 0) if got else 0

    def schema_version(self) -> int:
        with self._lock:
            return self._version(self._live())

    # ---- dispatch lock ------------------------------------------------------------------

    def _lock_key(self, session_id: str) -> int:
        digest = hashlib.blake2b(f"{self._schema}\0{session_id}".encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big", signed=True)

    def _take_lock_conn(self) -> Connection[Any]:
        with self._lock_conns_guard:
            while self._idle_lock_conns:
                conn = self._idle_lock_conns.pop()
                if not (conn.closed or conn.broken):
                    return conn
        return self._connect()

    def _give_lock_conn(self, conn: Connection[Any]) -> None:
        if conn.closed or conn.broken:
            return
        with self._lock_conns_guard:
            self._idle_lock_conns.append(conn)

    @contextmanager
    def _advisory(self, session_id: str, timeout: float) -> Iterator[None]:
        self.get_session(session_id)  # SessionNotFoundError for an unknown session
        key = self._lock_key(session_id)
        conn = self._take_lock_conn()
        try:
            deadline = time.monotonic() + max(0.0, timeout)
            pause = 0.002
            while True:
                try:
                    got = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
                except psycopg.Error as exc:
                    raise self._error(exc) from None
                if got and got[0]:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SessionBusyError(
                        f"session {session_id!r} is being dispatched by another worker"
                    )
                time.sleep(min(pause, left))
                pause = min(pause * 2, 0.05)
            try:
                yield
            finally:
                try:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
                except psycopg.Error:
                    conn.close()  # the server drops the lock with the connection
        finally:
            self._give_lock_conn(conn)

    def dispatch_lock(
        self, session_id: str, *, timeout: float = 0.0
    ) -> AbstractContextManager[None]:
        return self._advisory(session_id, timeout)

    def close(self) -> None:
        with self._lock:
            self._conn.close()
            with self._lock_conns_guard:
                for conn in self._idle_lock_conns:
                    conn.close()
                self._idle_lock_conns.clear()
