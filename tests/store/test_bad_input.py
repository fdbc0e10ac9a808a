"""Bad stores: one clear sentence, a non-zero exit, and the file left byte-for-byte as it was."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxrelay.errors import MissingExtraError, StoreUnavailableError, UnsupportedSchemaError
from ctxrelay.store import open_store, resolve_target
from ctxrelay.testing import ThrowawayPostgres

PROJECT = Path(__file__).resolve().parents[2]


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    """``ctxrelay ARGV`` in a fresh process. The timeout only guards against a hang; the
    5 s promise comes from the connect timeout the backends set."""
    env = {**os.environ, "PYTHONPATH": str(PROJECT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "ctxrelay", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


def _one_sentence(done: subprocess.CompletedProcess[str], needle: str) -> None:
    assert done.returncode == 1, done
    assert done.stdout == ""
    assert done.stderr.startswith("ctxrelay: error: ")
    assert done.stderr.count("\n") == 1, done.stderr  # no traceback
    assert needle in done.stderr


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


# ---- SQLite -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [b"this is a text file, not a database\n" * 50, os.urandom(8192), b"SQLite format 3\x00junk"],
    ids=["text", "random", "bad-header"],
)
def test_not_a_database_is_refused_untouched(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(content)
    before = _snapshot(tmp_path)
    with pytest.raises(StoreUnavailableError, match="not a SQLite database"):
        open_store(path)
    _one_sentence(_cli("sessions", "list", "--db", str(path)), "not a SQLite database")
    _one_sentence(_cli("sessions", "reset", "abcd", "--db", str(path)), "not a SQLite database")
    assert _snapshot(tmp_path) == before


def test_another_programs_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.execute("INSERT INTO invoices (total) VALUES (12.5)")
    conn.commit()
    conn.close()
    before = _snapshot(tmp_path)
    with pytest.raises(StoreUnavailableError, match="another program"):
        open_store(path)
    _one_sentence(_cli("sessions", "list", "--db", str(path)), "another program")
    assert _snapshot(tmp_path) == before


def test_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    store = open_store(path)
    store.create_session()
    store.close()
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO ctx_schema (version, applied_at) VALUES (99, 0)")
    conn.commit()
    conn.close()
    before = _snapshot(tmp_path)
    with pytest.raises(UnsupportedSchemaError) as info:
        open_store(path)
    assert info.value.found == 99
    _one_sentence(_cli("sessions", "list", "--db", str(path)), "schema version 99")
    assert _snapshot(tmp_path) == before


def test_missing_or_empty_file_is_not_created_by_readers(tmp_path: Path) -> None:
    missing = tmp_path / "missing.db"
    _one_sentence(_cli("sessions", "list", "--db", str(missing)), "no ctxrelay store")
    assert not missing.exists()
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    _one_sentence(_cli("sessions", "show", "x", "--db", str(empty)), "is empty")
    assert empty.read_bytes() == b""
    _one_sentence(_cli("sessions", "list", "--db", str(tmp_path)), "is a directory")


def test_store_urls_resolve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_target(f"sqlite://{tmp_path}/a.db") == tmp_path / "a.db"
    assert resolve_target("rel/a.db") == Path("rel/a.db")
    assert resolve_target("postgresql://u@h/db") == "postgresql://u@h/db"
    monkeypatch.setenv("CTXRELAY_DB", str(tmp_path / "env.db"))
    assert resolve_target(None) == tmp_path / "env.db"
    monkeypatch.delenv("CTXRELAY_DB")
    default = resolve_target(None)
    assert isinstance(default, Path)
    assert default.name == "ctxrelay.db"
    _one_sentence(_cli("sessions", "list", "--db", "sqlite://host/x.db"), "SQLite URL")


# ---- PostgreSQL ---------------------------------------------------------------------------


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP port that accepts connections and never answers (a hung server)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(sock.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield sock.getsockname()[1]
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    sock.close()


def test_postgres_server_down(pg_server: ThrowawayPostgres) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql://ctxrelay:pw@127.0.0.1:{port}/ctxrelay_test"
    with pytest.raises(StoreUnavailableError, match="no server is listening"):
        open_store(url)
    done = _cli("sessions", "list", "--db", url)
    _one_sentence(done, "no server is listening")
    assert ":pw@" not in done.stderr  # never print the password


def test_postgres_hung_server_times_out(pg_server: ThrowawayPostgres, silent_server: int) -> None:
    url = f"postgresql://ctxrelay:pw@127.0.0.1:{silent_server}/db?connect_timeout=1"
    with pytest.raises(StoreUnavailableError, match="did not answer in time"):
        open_store(url)


def test_postgres_login_refused(pg_server: ThrowawayPostgres) -> None:
    url = pg_server.url("ctxrelay_test", password="wrong-password")
    with pytest.raises(StoreUnavailableError, match="refused the login of user 'ctxrelay'"):
        open_store(url)
    done = _cli("sessions", "list", "--db", url)
    _one_sentence(done, "refused the login")
    assert "wrong-password" not in done.stderr


def test_postgres_missing_database(pg_server: ThrowawayPostgres) -> None:
    _one_sentence(
        _cli("sessions", "list", "--db", pg_server.url("no_such_db")), '"no_such_db" does not exist'
    )


def test_postgres_newer_schema_is_refused_untouched(pg_url: str) -> None:
    import psycopg

    store = open_store(pg_url)
    store.create_session()
    store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO ctx_schema (version, applied_at) VALUES (99, 0)")
        before = conn.execute("SELECT version FROM ctx_schema ORDER BY version").fetchall()
        tables = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"
        ).fetchone()
    with pytest.raises(UnsupportedSchemaError):
        open_store(pg_url)
    _one_sentence(_cli("sessions", "list", "--db", pg_url), "schema version 99")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT version FROM ctx_schema ORDER BY version").fetchall() == before
        assert (
            conn.execute(
                "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"
            ).fetchone()
            == tables
        )
        assert conn.execute("SELECT count(*) FROM ctx_sessions").fetchone() == (1,)


def test_postgres_empty_database_is_not_initialised_by_readers(pg_url: str) -> None:
    _one_sentence(_cli("sessions", "list", "--db", pg_url), "no ctxrelay store")
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT to_regclass('ctx_schema')").fetchone() == (None,)


def test_postgres_without_the_extra_names_it() -> None:
    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "from ctxrelay.store import open_store\n"
        "try:\n"
        "    open_store('postgresql://u@127.0.0.1/db')\n"
        "except ImportError as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(PROJECT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    )
    assert done.stdout.startswith(MissingExtraError.__name__)
    assert "ctxrelay[postgres]" in done.stdout
