"""Fixtures the integration tests share: each harness (skipped with the extra to install
when its framework is missing), a workspace and a SQLite store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxrelay.store import Store, open_store
from tests.integrations.harness import HARNESSES, Harness, installed


@pytest.fixture(params=HARNESSES, ids=lambda h: h.name)
def harness(request: pytest.FixtureRequest) -> Harness:
    h: Harness = request.param
    if not installed(h):
        pytest.skip(f"{h.name} is not installed (pip install 'ctxrelay[{h.extra}]')")
    return h


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "README.md").write_text("# todo\n\nA tiny task list.\n")
    (root / "todo.py").write_text("def main():\n    return 0\n")
    (root / "big.log").write_text("".join(f"line {i:06d} PASSED\n" for i in range(5_000)))
    return root


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = open_store(str(tmp_path / "relay.db"))
    yield s
    s.close()
