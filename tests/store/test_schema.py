"""The schema's CHECK constraints admit exactly the row kinds and seal reasons of the
Protocol (``ROW_KINDS``, ``SEAL_REASONS``), on each backend, after every migration.

The migrations spell the lists as SQL literals on purpose: a shipped migration is history
and must not change when the tuples do. Adding a kind or a reason therefore needs a new
migration, and this test is what says so.
"""

from __future__ import annotations

import re
import sqlite3

from ctxrelay.store import ROW_KINDS, SEAL_REASONS, open_store


def _checks(target: str, table: str) -> str:
    """The text of ``table``'s CHECK constraints."""
    if target.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(target) as conn:
            rows = conn.execute(
                "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
                "WHERE conrelid = %s::regclass AND contype = 'c'",
                (table,),
            ).fetchall()
        return " ".join(str(r[0]) for r in rows)
    lite = sqlite3.connect(target)
    try:
        (sql,) = lite.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
    finally:
        lite.close()
    return " ".join(re.findall(r"CHECK\s*\(([^)]*\))", str(sql)))


def _admitted(checks: str, column: str) -> set[str]:
    # "kind IN ('user', ...)" (SQLite) or "kind = ANY (ARRAY['user'::text, ...])" (PostgreSQL)
    found = re.search(rf"\b{column}\b[^']*((?:'[a-z_]+'[^']*)+)", checks)
    assert found is not None, checks
    return set(re.findall(r"'([a-z_]+)'", found.group(1)))


def test_check_constraints_match_the_protocol(store_target: str) -> None:
    open_store(store_target).close()  # runs every migration
    assert _admitted(_checks(store_target, "ctx_rows"), "kind") == set(ROW_KINDS)
    assert _admitted(_checks(store_target, "ctx_windows"), "seal_reason") == set(SEAL_REASONS)
