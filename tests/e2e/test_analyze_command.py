"""The installed ``ctxrelay analyze`` command, as a user runs it, on the real corpus."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import corpus_path

pytestmark = pytest.mark.e2e


def _command() -> list[str]:
    script = Path(sys.executable).with_name("ctxrelay")
    return [str(script)] if script.exists() else [sys.executable, "-m", "ctxrelay"]


def test_analyze_json_over_the_transcript_corpus() -> None:
    root = corpus_path("corpora/claude-code-transcripts")
    done = subprocess.run(
        [*_command(), "analyze", str(root), "--json", "--sweep", "30..90"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    doc = json.loads(done.stdout)
    assert sorted(s["requests"] for s in doc["sessions"]) == [1, 4, 12, 139, 143, 152]
    assert doc["totals"]["sweep"]["recommended_threshold"] is not None
    # Every response of the run, priced at its own model, reconciles with the sessions.
    total = doc["totals"]["total"]
    assert total["requests"] == sum(s["total"]["requests"] for s in doc["sessions"])
    assert total["cost_usd"] == pytest.approx(doc["totals"]["cost_usd"], abs=1e-5)


def test_bad_input_exits_non_zero_with_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [*_command(), "analyze", str(tmp_path / "nothing-here")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
