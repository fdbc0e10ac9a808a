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

__all__ = ["CCUSAGE_VERSION", "binary", "compare", "opencode_sessions", "sessions", "token_counts"]

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


def sessions(agent: str, env: dict[str, str]) -> list[dict[str, Any]]:
    """``ccusage AGENT session --json --offline``'s sessions, with ``env`` added."""
    done = subprocess.run(
        [str(binary()), agent, "session", "--json", "--offline"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found: list[dict[str, Any]] = json.loads(done.stdout)["sessions"]
    return found


def opencode_sessions(data_dir: Path) -> dict[str, dict[str, Any]]:
    """ccusage's ``opencode`` sessions of the database in ``data_dir``, by session id."""
    return {s["sessionId"]: s for s in sessions("opencode", {"OPENCODE_DATA_DIR": str(data_dir)})}


def token_counts(ours: dict[str, Any], theirs: dict[str, Any]) -> tuple[list[int], list[int]]:
    """A ``--json`` session's total tokens and a ccusage session's, in the same order:
    uncached input, cache reads, cache writes, output."""
    usage = ours["total"]["usage"]
    mine = (
        "input_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        "output_tokens",
    )
    its = ("inputTokens", "cacheReadTokens", "cacheCreationTokens", "outputTokens")
    return [usage[k] for k in mine], [theirs[k] for k in its]


def _ccusage(home: Path) -> dict[str, dict[str, Any]]:
    return {s["sessionFile"]: s for s in sessions("codex", {"CODEX_HOME": str(home)})}


def _ours(home: Path) -> dict[str, dict[str, Any]]:
    doc = report_json(analyze_paths([home / "sessions"]))
    return {Path(s["path"]).stem: s for s in doc["sessions"]}


def compare(home: Path) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """ccusage's sessions and the files only ctxrelay counted; every file both counted
    has the same tokens and the same cost."""
    theirs, ours = _ccusage(home), _ours(home)
    assert set(theirs) <= set(ours)
    for name, c in theirs.items():
        mine, its = token_counts(ours[name], c)
        assert mine == its, name
        cost = ours[name]["cost_usd"]
        if c["models"].keys() & set(ours[name]["whatif"]["unpriced_models"]):
            assert cost is None, name  # ccusage prices an unknown model at 0; ctxrelay names it
        else:
            assert cost == pytest.approx(c["costUSD"], abs=1e-6), name
    return theirs, sorted(set(ours) - set(theirs))
