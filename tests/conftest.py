"""Shared fixtures: the real corpora in ``../shared`` (skipped with a reason when absent,
a failure when ``CTXRELAY_REQUIRE_CORPORA=1``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# The store's fixtures (a throwaway PostgreSQL cluster, per-test store locations).
pytest_plugins = ["tests.store.fixtures"]

PROJECT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CTXRELAY_SHARED_DIR", PROJECT.parent / "shared"))


def required(flag: str) -> bool:
    """Whether ``CTXRELAY_REQUIRE_<flag>`` turns a missing dependency into a failure."""
    return os.environ.get(f"CTXRELAY_REQUIRE_{flag}", "") not in ("", "0")


def need(flag: str, reason: str) -> None:
    """Skip with ``reason``, or fail when the dependency is required (CI)."""
    if required(flag):
        pytest.fail(f"{reason} (CTXRELAY_REQUIRE_{flag}=1)")
    pytest.skip(reason)


def corpus_path(relative: str) -> Path:
    """A path under ``../shared``; skips (or fails in CI) when it is absent."""
    path = SHARED / relative
    if not path.exists():
        need("CORPORA", f"shared corpus {relative} not found at {SHARED}")
    return path


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED.exists():
        need("CORPORA", f"the shared corpora are not at {SHARED}")
    return SHARED


def claude_cli() -> Path:
    """The Claude Code CLI bundled by claude-agent-sdk (``ctxrelay.claude.setup.binary.cli_path``);
    skips (or fails when ``CTXRELAY_REQUIRE_CLAUDE=1``) when it is absent."""
    from ctxrelay.claude.setup.binary import cli_path

    found = cli_path(bundled=True)
    if found is None:
        need("CLAUDE", "no Claude Code CLI bundled by claude-agent-sdk (pip install '.[claude]')")
    assert found is not None
    return found
