"""The pinned Codex CLI for the tests: skips with the reason, or fails when
``CTXRELAY_REQUIRE_CODEX=1`` (``.ci/run``), when ``make setup`` could not install it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import PROJECT, need

PACKAGE_JSON = PROJECT / "scripts" / "codex" / "package.json"


def pinned_version() -> str:
    """The version ``scripts/codex/package.json`` pins (the one owner of it)."""
    data = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))
    version: str = data["dependencies"]["@openai/codex"]
    return version


def codex_cli() -> Path:
    from ctxrelay.codex.setup.binary import cli_path

    found = cli_path(pinned=True)
    if found is None:
        need("CODEX", "the pinned Codex CLI is not installed (make setup installs it with npm)")
    assert found is not None
    return found
