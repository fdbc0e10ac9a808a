"""The pinned Gemini CLI for the tests: skips with the reason, or fails when
``CTXRELAY_REQUIRE_GEMINI=1`` (``.ci/run``), when ``make setup`` could not install it."""

from __future__ import annotations

import json
from pathlib import Path

from ctxrelay.gemini.setup.binary import cli_path
from tests.conftest import PROJECT, need

PACKAGE_JSON = PROJECT / "scripts" / "gemini" / "package.json"


def pinned_version() -> str:
    """The version ``scripts/gemini/package.json`` pins (the one owner of it)."""
    data = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))
    version: str = data["dependencies"]["@google/gemini-cli"]
    return version


def gemini_cli() -> Path:
    found = cli_path(pinned=True)
    if found is None:
        need("GEMINI", "the pinned Gemini CLI is not installed (make setup installs it with npm)")
    assert found is not None
    return found
