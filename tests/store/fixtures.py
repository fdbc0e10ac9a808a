"""Store fixtures (a plugin registered in tests/conftest.py, so every test package can use
them): a throwaway PostgreSQL cluster for the session (skipped with a reason,
or a failure under ``CTXRELAY_REQUIRE_POSTGRES=1``, when the server binaries or psycopg
are missing), and one fresh store location per test for each backend."""

from __future__ import annotations

import importlib.util
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxrelay.testing import ThrowawayPostgres, find_server_binaries
from tests.conftest import need


@pytest.fixture(scope="session")
def pg_server() -> Iterator[ThrowawayPostgres]:
    if importlib.util.find_spec("psycopg") is None:
        need("POSTGRES", "psycopg is not installed (pip install 'ctxrelay[postgres]')")
    bindir = find_server_binaries()
    if bindir is None:
        need(
            "POSTGRES",
            "PostgreSQL server binaries (initdb, pg_ctl) not found; "
            "run scripts/ensure-services.sh or set CTXRELAY_PG_BIN",
        )
        raise AssertionError("unreachable")
    server = ThrowawayPostgres(bindir, durable=False).start()
    try:
        server.create_database("ctxrelay_test")
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: ThrowawayPostgres) -> str:
    """A URL of an empty schema of its own (so each test has a fresh store)."""
    import psycopg

    schema = "t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(pg_server.url("ctxrelay_test"), autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    return pg_server.url("ctxrelay_test", options=f"-csearch_path={schema}")


@pytest.fixture(params=["sqlite", "postgresql"])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh store location on each backend: a file path or a PostgreSQL URL."""
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    url: str = request.getfixturevalue("pg_url")
    return url
