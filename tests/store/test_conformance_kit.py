"""The conformance kit itself: it runs without pytest, and it fails a broken backend
with the name of the contract it broke."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.errors import ConfigError
from ctxrelay.store import NewRow, Row, Store, open_store
from ctxrelay.store.conformance import CONTRACTS, StoreConformanceError, run_store_conformance


def test_the_kit_runs_every_contract_without_pytest(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        from ctxrelay.store import open_store
        from ctxrelay.store.conformance import run_store_conformance

        ran = run_store_conformance(lambda name: open_store({str(tmp_path)!r} + "/" + name))
        assert "pytest" not in sys.modules, "the kit imported pytest"
        print(len(ran))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == len(CONTRACTS)
    assert len(CONTRACTS) >= 29


class _ClaimsTwice:
    """A backend that forgets its claims: every advisory is appended."""

    def __init__(self, inner: Store) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def append_advisory(self, session_id: str, window_id: str, stage: str, row: NewRow) -> Row:
        rows: Sequence[Row] = self._inner.append(session_id, window_id, [row])
        return rows[0]


def test_a_broken_backend_fails_with_the_contract_it_broke(tmp_path: Path) -> None:
    def broken(name: str) -> Store:
        store: Any = _ClaimsTwice(open_store(tmp_path / name))
        return store  # type: ignore[no-any-return]

    name = "claim_once_per_window_and_stage"
    with pytest.raises(StoreConformanceError) as info:
        run_store_conformance(broken, only=[name])
    assert info.value.contract == name
    assert name in str(info.value)
    # The same backend keeps every promise that does not involve claims.
    assert run_store_conformance(broken, only=["rows_filters"]) == ["rows_filters"]


def test_unknown_contract_names_are_one_clear_error() -> None:
    with pytest.raises(ConfigError, match="no store contract named nope"):
        run_store_conformance(open_store, only=["nope"])
