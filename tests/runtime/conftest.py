from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxrelay.store import open_store
from tests.runtime.helpers import Harness


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    store = open_store(tmp_path / "sessions.db")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    try:
        yield Harness(store, workspace, tmp_path / "received.jsonl")
    finally:
        store.close()
