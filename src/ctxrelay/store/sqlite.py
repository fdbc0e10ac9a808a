"""The SQLite backend: the embedded default, one file in WAL mode, safe for several
processes on one machine at once.

- Writers take ``BEGIN IMMEDIATE`` (the database write lock) for each method, so every
  method is one short serialised transaction; readers never block writers (WAL).
- ``synchronous=NORMAL``: a commit is durable against a crash of the *process* (SIGKILL
  included: the WAL is in the OS page cache and is replayed on the next open); only an
  OS crash or power loss can drop the last few commits, never tear one.
- The session lease (and the dispatch lock, which holds it) is a row of ``ctx_leases``:
  a killed holder never wedges a session (``store/_lease.py`` says when it is taken over).
- Opening checks the file read-only first: a file that is not a SQLite database, a SQLite
  database of another program, or a ctxrelay database with a newer schema is refused and
  left byte-for-byte untouched.
"""

from __future__ import annotations

import sqlite3
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from ctxrelay.errors import (
    StoreError,
    StoreUnavailableError,
    UnsupportedSchemaError,
)
from ctxrelay.store._base import SCHEMA_VERSION, SqlStore

__all__ = ["BUSY_TIMEOUT_S", "SqliteStore"]

# Connections inherited across fork, kept referenced so the child never closes them.
_ABANDONED: list[sqlite3.Connection] = []

#: How long a writer waits for another process's write transaction before giving up.
BUSY_TIMEOUT_S = 10.0
#: ``PRAGMA application_id`` of a ctxrelay store ("ctxr"), so tools like ``file`` know it.
APPLICATION_ID = 0x63747872
#: RETURNING (used to reserve sequence numbers in one statement) needs SQLite 3.35.
MIN_SQLITE = (3, 35, 0)

# Spelled out, not built from ROW_KINDS/SEAL_REASONS: migration 1 is history and must not
# change with the tuples. A new kind or reason needs a new migration;
# tests/store/test_schema.py fails until the live schema admits exactly the tuples.
_KINDS = "'user','assistant','tool_call','tool_result','warning','boundary','lead_in','flush'"
_REASONS = "'new_context','forced','emergency','manual_reset','legacy_flush'"

# version -> statements that bring the schema from version-1 to version.
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE ctx_sessions (
            id TEXT PRIMARY KEY,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            status TEXT NOT NULL,
            metadata TEXT NOT NULL,
            next_seq INTEGER NOT NULL
        )""",
        "CREATE INDEX ctx_sessions_created ON ctx_sessions (created_at)",
        f"""CREATE TABLE ctx_windows (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES ctx_sessions (id),
            idx INTEGER NOT NULL,
            opened_at REAL NOT NULL,
            sealed_at REAL,
            seal_reason TEXT CHECK (seal_reason IN ({_REASONS})),
            UNIQUE (session_id, idx)
        )""",
        f"""CREATE TABLE ctx_rows (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL REFERENCES ctx_sessions (id),
            window_id TEXT NOT NULL REFERENCES ctx_windows (id),
            seq INTEGER NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ({_KINDS})),
            text TEXT,
            metadata TEXT NOT NULL,
            created_at REAL NOT NULL,
            UNIQUE (session_id, seq)
        )""",
        "CREATE INDEX ctx_rows_window ON ctx_rows (window_id, seq)",
        """CREATE TABLE ctx_claims (
            window_id TEXT NOT NULL REFERENCES ctx_windows (id),
            stage TEXT NOT NULL,
            row_id INTEGER NOT NULL REFERENCES ctx_rows (id),
            created_at REAL NOT NULL,
            PRIMARY KEY (window_id, stage)
        )""",
    ),
    2: (
        """CREATE TABLE ctx_leases (
            session_id TEXT PRIMARY KEY REFERENCES ctx_sessions (id),
            token TEXT NOT NULL,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            since REAL NOT NULL,
            expires_at REAL NOT NULL,
            node TEXT NOT NULL,
            label TEXT NOT NULL
        )""",
    ),
}
assert max(MIGRATIONS) == SCHEMA_VERSION


def _inspect(path: Path) -> int | None:
    """Read-only look at an existing file: its ctxrelay schema version, ``None`` for an
    empty database. Raises (leaving the file untouched) for anything else."""
    with path.open("rb") as fh:
        if fh.read(16) != b"SQLite format 3\x00":
            raise StoreUnavailableError(f"{path} is not a SQLite database (it was left untouched)")
    if not path.with_name(path.name + "-wal").exists():
        # No WAL to replay: the file alone is the database. Read it as immutable, so the
        # look creates no -shm/-wal beside a file we may be about to refuse. A writer
        # that starts meanwhile can confuse an immutable read: then look again normally.
        try:
            return _tables_version(path, immutable=True)
        except StoreUnavailableError:
            pass
    return _tables_version(path, immutable=False)


def _tables_version(path: Path, *, immutable: bool) -> int | None:
    uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro"
    if immutable:
        uri += "&immutable=1"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error as exc:
        raise StoreUnavailableError(f"cannot open {path} for reading: {exc}") from None
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            return None
        if "ctx_schema" not in tables:
            raise StoreUnavailableError(
                f"{path} is a SQLite database of another program, not a ctxrelay store "
                "(it was left untouched)"
            )
        found = conn.execute("SELECT MAX(version) FROM ctx_schema").fetchone()[0]
        version = int(found or 0)
        if version > SCHEMA_VERSION:
            raise UnsupportedSchemaError(version, SCHEMA_VERSION)
        return version
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc) or "malformed" in str(exc):
            raise StoreUnavailableError(
                f"{path} is not a SQLite database, or a damaged one (it was left untouched)"
            ) from None
        raise StoreUnavailableError(f"cannot read {path}: {exc}") from None
    except sqlite3.Error as exc:
        raise StoreUnavailableError(f"cannot read {path}: {exc}") from None
    finally:
        conn.close()


class SqliteStore(SqlStore):
    """A :class:`ctxrelay.store.Store` in one SQLite file."""

    backend = "sqlite"

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        super().__init__()
        if sqlite3.sqlite_version_info < MIN_SQLITE:
            raise StoreUnavailableError(
                f"the SQLite store needs SQLite {'.'.join(map(str, MIN_SQLITE))} or newer; "
                f"this Python has {sqlite3.sqlite_version}"
            )
        self.path = Path(path).expanduser()
        if self.path.is_dir():
            raise StoreUnavailableError(f"{self.path} is a directory, not a database file")
        if self.path.exists():
            version = _inspect(self.path) if self.path.stat().st_size > 0 else None
            if version is None and not create:
                raise StoreUnavailableError(f"{self.path} is empty, not a ctxrelay store yet")
        elif not create:
            raise StoreUnavailableError(f"there is no ctxrelay store at {self.path}")
        else:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreUnavailableError(
                    f"cannot create the directory for {self.path}: {exc.strerror}"
                ) from None
        self._conn = self._connect()
        try:
            self._use_wal()
            self._migrate()
        except sqlite3.Error as exc:
            self._conn.close()
            raise self._error(exc) from None
        except BaseException:
            self._conn.close()
            raise

    def _use_wal(self) -> None:
        """Switch the file to WAL. Processes opening a new file at once race here, and
        SQLite answers the journal-mode change "database is locked" at once rather than
        through the busy handler, so the change is tried again until the busy timeout."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                self._conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                busy = "locked" in str(exc) or "busy" in str(exc)
                if not busy or time.monotonic() >= deadline:
                    raise
            time.sleep(0.01)

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self.path,
                timeout=BUSY_TIMEOUT_S,
                isolation_level=None,  # we issue BEGIN/COMMIT ourselves
                check_same_thread=False,  # guarded by self._lock
                cached_statements=256,
            )
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error as exc:
            raise StoreUnavailableError(f"cannot open {self.path}: {exc}") from None
        return conn

    def describe(self) -> str:
        return "sqlite://" + self.path.resolve().as_posix()

    # ---- transactions -------------------------------------------------------------------

    def _error(self, exc: sqlite3.Error) -> StoreError:
        text = str(exc)
        if "locked" in text or "busy" in text:
            return StoreError(
                f"the SQLite store {self.path} stayed locked by another process for "
                f"{BUSY_TIMEOUT_S:g} s; nothing was written, try again"
            )
        if "not a database" in text:
            return StoreUnavailableError(f"{self.path} is not a SQLite database")
        return StoreError(f"the SQLite store {self.path} failed: {text}")

    @contextmanager
    def _transaction(self, begin: str | None) -> Iterator[sqlite3.Cursor]:
        if self._forked():
            # The parent's connection is left open and untouched (closing it here could
            # disturb the parent's locks); this child gets its own.
            _ABANDONED.append(self._conn)
            self._conn = self._connect()
        cur = self._conn.cursor()
        try:
            try:
                if begin is not None:
                    cur.execute(begin)
            except sqlite3.Error as exc:
                raise self._error(exc) from None
            try:
                yield cur
                if begin is not None:
                    cur.execute("COMMIT")
            except sqlite3.Error as exc:
                self._conn.rollback()
                raise self._error(exc) from None
            except UnicodeEncodeError:
                self._conn.rollback()
                raise StoreError(
                    "text or metadata is not valid Unicode (a lone surrogate)"
                ) from None
            except BaseException:
                self._conn.rollback()
                raise
        finally:
            cur.close()

    def _write(self) -> AbstractContextManager[Any]:
        return self._transaction("BEGIN IMMEDIATE")

    def _read(self) -> AbstractContextManager[Any]:
        return self._transaction("BEGIN")

    def _peek(self) -> AbstractContextManager[Any]:
        return self._transaction(None)

    def _migrate(self) -> None:
        cur = self._conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            have = cur.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ctx_schema'"
            ).fetchone()
            if have is None:
                others = cur.execute(
                    "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'"
                ).fetchone()[0]
                if others:  # another program's tables appeared since we looked
                    raise StoreUnavailableError(
                        f"{self.path} is a SQLite database of another program, not a "
                        "ctxrelay store (it was left untouched)"
                    )
                cur.execute(
                    "CREATE TABLE ctx_schema (version INTEGER NOT NULL, applied_at REAL NOT NULL)"
                )
                cur.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                version = 0
            else:
                version = int(cur.execute("SELECT MAX(version) FROM ctx_schema").fetchone()[0] or 0)
            if version > SCHEMA_VERSION:
                raise UnsupportedSchemaError(version, SCHEMA_VERSION)
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[target]:
                    cur.execute(statement)
                cur.execute(
                    "INSERT INTO ctx_schema (version, applied_at) VALUES (?, ?)",
                    (target, time.time()),
                )
            cur.execute("COMMIT")
        except BaseException:
            self._conn.rollback()
            raise
        finally:
            cur.close()

    def schema_version(self) -> int:
        with self._lock, self._read() as cur:
            return int(cur.execute("SELECT MAX(version) FROM ctx_schema").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()
