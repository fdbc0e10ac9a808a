"""The shipped conformance kit against the SQLite backend, one pytest test per contract."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxrelay.store import open_store
from ctxrelay.store.conformance import CONTRACTS, Contract, run_contract


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name)
def test_sqlite_conformance(contract: Contract, tmp_path: Path) -> None:
    run_contract(contract, lambda name: open_store(tmp_path / f"{name}.db"))
