"""A throwaway PostgreSQL cluster for tests and benchmarks: ``initdb`` in a temp dir, a
server on 127.0.0.1 at a free port, password logins, removed on ``stop()``.

The server binaries refuse to run as root, so as root they run as the ``postgres`` user
(Debian's package creates it; ``nobody`` otherwise) through ``runuser``, in a temp dir
that user owns.
"""

from __future__ import annotations

import glob
import os
import pwd
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
import urllib.parse
from pathlib import Path

__all__ = ["ThrowawayPostgres", "find_server_binaries"]

#: Overrides where the server binaries are looked up (a directory with initdb, pg_ctl).
BIN_ENV = "CTXRELAY_PG_BIN"


def _version_key(path: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", path)) or (0,)


def find_server_binaries() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl``, newest version first; ``None``."""
    explicit = os.environ.get(BIN_ENV)
    if explicit:  # only there: also how to check the "no server binaries" path
        candidates = [explicit]
    else:
        candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version_key, reverse=True)
        found = shutil.which("initdb")
        if found:
            candidates.append(str(Path(found).parent))
    for candidate in candidates:
        bindir = Path(candidate)
        if (bindir / "initdb").is_file() and (bindir / "pg_ctl").is_file():
            return bindir
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ThrowawayPostgres:
    """Start with :meth:`start`, get URLs with :meth:`url`, end with :meth:`stop`."""

    user = "ctxrelay"

    def __init__(self, bindir: Path, *, durable: bool = True) -> None:
        self.bindir = bindir
        self.durable = durable  # False: fsync off (tests only; clients are what we kill)
        self.password = secrets.token_hex(12)
        self.port = 0
        self.base: Path | None = None
        # The server refuses root; run it as "postgres" (Debian creates it) or "nobody".
        self._run_as: str | None = None
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            names = {entry.pw_name for entry in pwd.getpwall()}
            self._run_as = "postgres" if "postgres" in names else "nobody"

    def _run(self, *args: str, timeout: float = 120) -> None:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self._run_as:
            cmd = ["runuser", "-u", self._run_as, "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        if done.returncode != 0:
            log = ""
            if self.base is not None and (self.base / "server.log").exists():
                log = (self.base / "server.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(
                f"{args[0]} failed ({done.returncode}): {done.stderr.strip()[-2000:]} {log}"
            )

    def start(self) -> ThrowawayPostgres:
        self.base = Path(tempfile.mkdtemp(prefix="ctxrelay-pg-"))
        if self._run_as:
            shutil.chown(self.base, self._run_as)
        data = self.base / "data"
        pwfile = self.base / "pw"
        pwfile.write_text(self.password + "\n")
        if self._run_as:
            shutil.chown(pwfile, self._run_as)
        self._run(
            "initdb",
            "-D",
            str(data),
            "-U",
            self.user,
            f"--pwfile={pwfile}",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        pwfile.unlink()
        options = [
            "-c listen_addresses=127.0.0.1",
            f"-c unix_socket_directories={self.base}",
            "-c max_connections=200",
            "-c shared_buffers=32MB",
        ]
        if not self.durable:
            options += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
        for _ in range(5):  # the free port can be taken between probe and bind
            self.port = _free_port()
            try:
                self._run(
                    "pg_ctl",
                    "-D",
                    str(data),
                    "-l",
                    str(self.base / "server.log"),
                    "-w",
                    "-t",
                    "60",
                    "-o",
                    " ".join([*options, f"-p {self.port}"]),
                    "start",
                )
                return self
            except RuntimeError:
                if "could not bind" not in (self.base / "server.log").read_text(errors="replace"):
                    raise
        raise RuntimeError("could not find a free port for PostgreSQL")

    def url(self, dbname: str = "postgres", *, password: str | None = None, **params: str) -> str:
        secret = urllib.parse.quote(self.password if password is None else password, safe="")
        query = ("?" + urllib.parse.urlencode(params)) if params else ""
        return f"postgresql://{self.user}:{secret}@127.0.0.1:{self.port}/{dbname}{query}"

    def create_database(self, name: str) -> str:
        """Create a database and return its URL."""
        import psycopg  # noqa: PLC0415 — psycopg (extra postgres): finding a server needs none

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self.base is None:
            return
        try:
            if (self.base / "data" / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.base / "data"), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.base, ignore_errors=True)
            self.base = None
