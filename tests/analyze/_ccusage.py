"""ccusage's numbers for a Codex home beside ``ctxrelay analyze``'s, file by file.

ccusage is its pinned native binary (the pin is ``scripts/codex/package.json``, one for
``make setup`` and ``bench/analyze.py``): ``CTXRELAY_CCUSAGE`` if set, else the one
``make setup`` installed into ``<venv>/codex``, else ``bench/analyze.py``'s cache. Without
it a test skips and says so; under ``CTXRELAY_REQUIRE_CODEX=1`` (CI) it fails."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.analyze import analyze_paths, report_json
from tests.conftest import need

__all__ = ["CCUSAGE_VERSION", "binary", "compare"]

PINS = Path(__file__).resolve().parents[2] / "scripts" / "codex" / "package.json"
CCUSAGE_VERSION: str = json.loads(PINS.read_text(encoding="utf-8"))["dependencies"]["ccusage"]


def binary() -> Path:
    """ccusage's native binary, or a skip (a failure in CI) that says where it was looked for."""
    named = os.environ.get("CTXRELAY_CCUSAGE")
    if named:
        return Path(named)
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower(), "unknown"
    )
    package = Path("node_modules") / "@ccusage" / f"ccusage-{sys.platform}-{arch}" / "bin"
    places = (
        Path(sys.prefix) / "codex" / package / "ccusage",
        Path(tempfile.gettempdir())
        / f"ctxrelay-bench-ccusage-{CCUSAGE_VERSION}"
        / package
        / "ccusage",
    )
    for place in places:
        if place.is_file() and os.access(place, os.X_OK):
            return place
    need(
        "CODEX",
        f"ccusage {CCUSAGE_VERSION}'s native binary is not installed "
        "(make setup installs it with npm; or set CTXRELAY_CCUSAGE)",
    )
    raise AssertionError("need() skips or fails")


def _ccusage(home: Path) -> dict[str, dict[str, Any]]:
    done = subprocess.run(
        [str(binary()), "codex", "session", "--json", "--offline"],
        env={**os.environ, "CODEX_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return {s["sessionFile"]: s for s in json.loads(done.stdout)["sessions"]}


def _ours(home: Path) -> dict[str, dict[str, Any]]:
    doc = report_json(analyze_paths([home / "sessions"]))
    return {Path(s["path"]).stem: s for s in doc["sessions"]}


def compare(home: Path) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """ccusage's sessions and the files only ctxrelay counted; every file both counted
    has the same tokens and the same cost."""
    theirs, ours = _ccusage(home), _ours(home)
    assert set(theirs) <= set(ours)
    for name, c in theirs.items():
        usage = ours[name]["total"]["usage"]
        assert (
            usage["input_tokens"],
            usage["cache_read_input_tokens"],
            usage["cache_creation_input_tokens"],
            usage["output_tokens"],
        ) == (
            c["inputTokens"],
            c["cacheReadTokens"],
            c["cacheCreationTokens"],
            c["outputTokens"],
        ), name
        cost = ours[name]["cost_usd"]
        if c["models"].keys() & set(ours[name]["whatif"]["unpriced_models"]):
            assert cost is None, name  # ccusage prices an unknown model at 0; ctxrelay names it
        else:
            assert cost == pytest.approx(c["costUSD"], abs=1e-6), name
    return theirs, sorted(set(ours) - set(theirs))
