"""The shipped conformance kit against the PostgreSQL backend (a throwaway cluster), one
pytest test per contract; each contract's database is a schema of its own."""

from __future__ import annotations

import pytest

from ctxrelay.store import Store, open_store
from ctxrelay.store.conformance import CONTRACTS, Contract, run_contract
from ctxrelay.testing import ThrowawayPostgres


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name)
def test_postgres_conformance(contract: Contract, pg_server: ThrowawayPostgres) -> None:
    import psycopg

    base = pg_server.url("ctxrelay_test")

    def open_schema(name: str) -> Store:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {name}")
        return open_store(pg_server.url("ctxrelay_test", options=f"-csearch_path={name}"))

    run_contract(contract, open_schema)
