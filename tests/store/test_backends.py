"""Backend behaviour beyond the Protocol: migrations, fork safety, reconnection, settings."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.errors import StoreError
from ctxrelay.store import NewRow, open_store
from ctxrelay.store._base import SCHEMA_VERSION

_CTX = multiprocessing.get_context("fork")


def _schema_rows(target: str) -> list[Any]:
    if target.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(target) as conn:
            return conn.execute("SELECT version FROM ctx_schema").fetchall()
    lite = sqlite3.connect(target)
    try:
        return lite.execute("SELECT version FROM ctx_schema").fetchall()
    finally:
        lite.close()


def _open_and_report(target: str, barrier: Any, out: Any) -> None:
    barrier.wait()
    store = open_store(target)
    session = store.create_session()
    store.close()
    out.put(session.id)


def test_concurrent_first_opens_migrate_once(store_target: str) -> None:
    n = 6
    barrier, out = _CTX.Barrier(n), _CTX.Queue()
    procs = [
        _CTX.Process(target=_open_and_report, args=(store_target, barrier, out)) for _ in range(n)
    ]
    for p in procs:
        p.start()
    ids = {out.get(timeout=60) for _ in procs}
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert len(ids) == n
    # One row per migration, each applied once.
    assert _schema_rows(store_target) == [(v,) for v in range(1, SCHEMA_VERSION + 1)]
    with open_store(store_target) as store:  # type: ignore[attr-defined]
        assert store.schema_version() == SCHEMA_VERSION
        assert len(store.list_sessions()) == n


def _write_version_1(target: str) -> None:
    """A store as ctxrelay with schema version 1 wrote it: its migration only."""
    if target.startswith("postgresql://"):
        import psycopg

        from ctxrelay.store.postgres import MIGRATIONS as PG_MIGRATIONS

        with psycopg.connect(target, autocommit=True) as conn, conn.transaction():
            conn.execute(
                "CREATE TABLE ctx_schema (version integer NOT NULL, "
                "applied_at double precision NOT NULL)"
            )
            for statement in PG_MIGRATIONS[1]:
                conn.execute(statement)
            conn.execute("INSERT INTO ctx_schema VALUES (1, 0)")
            conn.execute("INSERT INTO ctx_sessions VALUES ('old', 0, 0, 'paused', '{\"k\": 1}', 1)")
            conn.execute(
                "INSERT INTO ctx_windows (id, session_id, idx, opened_at) VALUES (%s, %s, 1, 0)",
                ("w1", "old"),
            )
        return
    from ctxrelay.store.sqlite import APPLICATION_ID
    from ctxrelay.store.sqlite import MIGRATIONS as LITE_MIGRATIONS

    lite = sqlite3.connect(target, isolation_level=None)
    try:
        lite.execute("PRAGMA journal_mode = WAL")
        lite.execute("BEGIN")
        lite.execute("CREATE TABLE ctx_schema (version INTEGER NOT NULL, applied_at REAL NOT NULL)")
        lite.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        for statement in LITE_MIGRATIONS[1]:
            lite.execute(statement)
        lite.execute("INSERT INTO ctx_schema VALUES (1, 0)")
        lite.execute("INSERT INTO ctx_sessions VALUES ('old', 0, 0, 'paused', '{\"k\": 1}', 1)")
        lite.execute(
            "INSERT INTO ctx_windows (id, session_id, idx, opened_at) VALUES ('w1', 'old', 1, 0)"
        )
        lite.execute("COMMIT")
    finally:
        lite.close()


def test_a_version_1_store_is_upgraded_in_place(store_target: str) -> None:
    _write_version_1(store_target)
    assert _schema_rows(store_target) == [(1,)]
    with open_store(store_target) as store:  # type: ignore[attr-defined]
        assert store.schema_version() == SCHEMA_VERSION == 2
        old = store.get_session("old")
        assert old.metadata == {"k": 1}
        assert store.current_window("old").id == "w1"
        assert store.lease("old") is None  # the new table, empty
        lease = store.acquire_lease("old")
        store.append("old", "w1", [NewRow("user", "after the upgrade")])
        store.release_lease(lease)
    assert _schema_rows(store_target) == [(1,), (2,)]
    with open_store(store_target) as store:  # type: ignore[attr-defined]
        assert [r.text for r in store.rows("old")] == ["after the upgrade"]


def _child_appends(store: Any, session_id: str, window_id: str) -> None:
    store.append(session_id, window_id, [NewRow("user", "from the child")])
    with store.dispatch_lock(session_id):
        pass


def test_a_handle_inherited_across_fork_gets_its_own_connection(store_target: str) -> None:
    store = open_store(store_target)
    try:
        session = store.create_session()
        window = store.current_window(session.id)
        store.append(session.id, window.id, [NewRow("user", "before fork")])
        child = _CTX.Process(target=_child_appends, args=(store, session.id, window.id))
        child.start()
        child.join(60)
        assert child.exitcode == 0
        # The parent's connection still works after the child used (and exited with) it.
        store.append(session.id, window.id, [NewRow("user", "after fork")])
        texts = [r.text for r in store.rows(session.id)]
        assert texts == ["before fork", "from the child", "after fork"]
    finally:
        store.close()


def test_postgres_reconnects_after_losing_its_connection(pg_url: str) -> None:
    import psycopg

    store = open_store(pg_url)
    try:
        session = store.create_session()
        backend_pid = store._conn.info.backend_pid  # type: ignore[attr-defined]
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (backend_pid,))
        with pytest.raises(StoreError, match="lost the connection"):
            store.get_session(session.id)
        assert store.get_session(session.id).id == session.id  # reconnected
    finally:
        store.close()


def test_sqlite_settings(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with open_store(path) as store:  # type: ignore[attr-defined]
        store.create_session()
        assert store.describe() == "sqlite://" + path.resolve().as_posix()
        conn = sqlite3.connect(path)
        try:
            assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
            assert conn.execute("PRAGMA application_id").fetchone() == (0x63747872,)
        finally:
            conn.close()
    # Missing parent directories are created for a new store.
    deep = tmp_path / "a" / "b" / "c.db"
    open_store(deep).close()
    assert deep.exists()
    assert os.access(deep, os.R_OK)
