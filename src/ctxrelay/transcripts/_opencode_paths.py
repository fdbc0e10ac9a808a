"""Where OpenCode's database is and how the analyzer tells one from a transcript, apart
from its reader (:mod:`ctxrelay.transcripts._opencode`): a run over transcripts alone
never loads ``sqlite3``."""

from __future__ import annotations

import os

__all__ = ["DATABASE_NAME", "default_opencode_db", "is_database"]

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
