"""The shipped conformance suite against the PostgreSQL backend (a throwaway cluster)."""

from __future__ import annotations

import pytest

from ctxrelay.store import open_store
from ctxrelay.store.conformance import StoreConformance, StoreFactory


class TestPostgresConformance(StoreConformance):
    @pytest.fixture
    def store_factory(self, pg_url: str) -> StoreFactory:
        return lambda: open_store(pg_url)
