"""The durable session store: sessions, windows, rows and claims behind one Protocol.

``open_store(target)`` picks the backend from where the store lives:

- ``None``: ``$CTXRELAY_DB`` if set, else ``ctxrelay.db`` in the user's data directory;
- a path, or a ``sqlite:///abs/path`` URL: SQLite (embedded, zero setup, the default);
- a ``postgresql://`` (or ``postgres://``) URL: PostgreSQL, with the ``postgres`` extra.

Both backends pass :mod:`ctxrelay.store.conformance`. See ``docs/store.md``.
"""

from __future__ import annotations

import os
import urllib.parse
from pathlib import Path

import platformdirs

from ctxrelay.errors import ConfigError
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
    RowKind,
    SealReason,
    SessionInfo,
    Store,
    WindowInfo,
)

__all__ = [
    "DB_ENV",
    "HISTORY_LINE_MAX_BYTES",
    "HISTORY_RESULT_MAX_BYTES",
    "HISTORY_ROWS_MAX",
    "HISTORY_SCAN_MAX_BYTES",
    "LEASE_TTL_S",
    "ROW_KINDS",
    "SEAL_REASONS",
    "HistoryHit",
    "Lease",
    "NewRow",
    "Row",
    "RowKind",
    "SealReason",
    "SessionInfo",
    "Store",
    "WindowInfo",
    "default_store_path",
    "open_store",
    "resolve_target",
]

#: Environment variable naming the store when no ``--db`` is given.
DB_ENV = "CTXRELAY_DB"

_PG_SCHEMES = ("postgresql://", "postgres://")


def default_store_path() -> Path:
    """``ctxrelay.db`` in the user's data directory (platform-specific)."""
    return platformdirs.user_data_path("ctxrelay", appauthor=False) / "ctxrelay.db"


def resolve_target(target: str | Path | None) -> str | Path:
    """What ``open_store`` would open: a ``Path`` for SQLite or a PostgreSQL URL."""
    if target is None:
        env = os.environ.get(DB_ENV, "").strip()
        return resolve_target(env) if env else default_store_path()
    if isinstance(target, Path):
        return target
    text = str(target).strip()
    if not text:
        raise ConfigError("the store location is empty; give a file path or a URL")
    if text.startswith(_PG_SCHEMES):
        return text
    if text.startswith("sqlite:"):
        parsed = urllib.parse.urlsplit(text)
        if parsed.netloc not in ("", "localhost") or not parsed.path:
            raise ConfigError(
                f"cannot read the SQLite URL {text!r}; write sqlite:///absolute/path.db "
                "or give a plain file path"
            )
        return Path(urllib.parse.unquote(parsed.path))
    if "://" in text:
        scheme = text.split("://", 1)[0]
        raise ConfigError(
            f"unsupported store URL scheme {scheme!r}; use a file path, sqlite:/// or postgresql://"
        )
    return Path(text)


def open_store(target: str | Path | None = None, *, create: bool = True) -> Store:
    """Open (and create or migrate, when ``create``) the store at ``target``.

    Raises :class:`ctxrelay.errors.StoreUnavailableError` (not a database, server down,
    login refused), :class:`ctxrelay.errors.UnsupportedSchemaError` (written by a newer
    ctxrelay) or :class:`ctxrelay.errors.MissingExtraError` (PostgreSQL without the
    ``postgres`` extra); the database is left untouched in each case.
    With ``create=False`` a missing SQLite file is an error instead of a new store.
    """
    where = resolve_target(target)
    if isinstance(where, Path):
        from ctxrelay.store.sqlite import SqliteStore  # noqa: PLC0415 — sqlite3, a store driver: a PostgreSQL store never loads it

        return SqliteStore(where, create=create)
    from ctxrelay.store.postgres import PostgresStore  # noqa: PLC0415 — psycopg (extra postgres)

    return PostgresStore(where, create=create)
