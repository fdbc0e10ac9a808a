"""Where OpenCode's database is and how the analyzer tells one from a transcript, apart
from its reader (:mod:`ctxrelay.transcripts._opencode`): a run over transcripts alone
never loads ``sqlite3``."""

from __future__ import annotations

import os

__all__ = [
    "DATABASE_NAME",
    "SESSION_MARK",
    "default_opencode_db",
    "is_database",
    "session_locator",
    "split_locator",
]

DATABASE_NAME = "opencode.db"
"""The database's name (a search of a folder finds it by this name)."""


def default_opencode_db() -> str:
    """Where OpenCode keeps its database: ``$OPENCODE_DB``, else
    ``$XDG_DATA_HOME/opencode/opencode.db`` (``~/.local/share`` when unset)."""
    named = os.environ.get("OPENCODE_DB")
    if named:
        return os.path.expanduser(named)
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share"
    )
    return os.path.join(data, "opencode", DATABASE_NAME)


def is_database(path: str) -> bool:
    """Whether the analyzer reads ``path`` as an OpenCode database: its name ends in
    ``.db`` (a transcript's in ``.jsonl``)."""
    return path.endswith(".db")


SESSION_MARK = "#"
"""What joins the database and a session's id in :func:`session_locator`."""


def session_locator(database: str | os.PathLike[str], session_id: str) -> str:
    """Where one OpenCode session is, as a handoff chain link names a transcript: the
    database and the session's id, ``/…/opencode.db#ses_…`` (one file holds every
    session)."""
    return f"{os.path.abspath(os.fspath(database))}{SESSION_MARK}{session_id}"


def split_locator(locator: str) -> tuple[str, str] | None:
    """The database and the session id of a :func:`session_locator`; ``None`` when
    ``locator`` names no session (an OpenCode session id has no ``#``)."""
    database, mark, session_id = locator.rpartition(SESSION_MARK)
    if not mark or not database or not session_id:
        return None
    return database, session_id
