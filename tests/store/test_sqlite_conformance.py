"""The shipped conformance suite against the SQLite backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxrelay.store import open_store
from ctxrelay.store.conformance import StoreConformance, StoreFactory


class TestSqliteConformance(StoreConformance):
    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> StoreFactory:
        return lambda: open_store(tmp_path / "store.db")
