"""``ctxrelay analyze`` on the real Gemini CLI's own session files, beside ccusage's
``gemini`` report on the same files: the same input, cached input and cost per session;
the output tokens differ by exactly the thinking tokens, which ctxrelay counts as output
(Google bills them so) and ccusage 20.0.24 prices as output but leaves out of its
``outputTokens`` (``docs/analyze.md``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.analyze import analyze_paths, report_json
from ctxrelay.pricing import DEFAULT_PRICES
from ctxrelay.testing import GeminiServer, Step, ToolUse
from tests.analyze._ccusage import binary
from tests.e2e._gemini import events, gemini_home, run_gemini, session_files
from tests.gemini._cli import gemini_cli

pytestmark = pytest.mark.e2e


def _ccusage(user: Path) -> dict[str, dict[str, Any]]:
    done = subprocess.run(
        [str(binary()), "gemini", "session", "--json", "--offline"],
        env={**os.environ, "GEMINI_DATA_DIR": str(user)},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return {s["sessionId"]: s for s in json.loads(done.stdout)["sessions"]}


def test_analyze_reads_the_clis_files_as_ccusage_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gemini_cli()
    steps = [
        Step(
            tool_calls=[ToolUse("run_shell_command", {"command": "echo hi"})],
            input_tokens=1_000,
            cache_read_input_tokens=5_000,
            reasoning_tokens=42,
            output_tokens=12,
        ),
        Step(text="Done.", input_tokens=1_200, cache_read_input_tokens=6_000, output_tokens=4),
    ]
    with GeminiServer(steps) as server:
        user, project = gemini_home(tmp_path, server, monkeypatch)
        events(run_gemini(project, "say hi"))
    (chat,) = session_files(user)
    report = report_json(analyze_paths([str(chat)]))
    (session,) = report["sessions"]
    theirs = _ccusage(user)[session["session_id"]]
    usage = session["usage"]
    assert usage == {
        "input_tokens": 2_200,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 11_000,
        "output_tokens": 58,
    }
    thoughts = 42
    assert (theirs["inputTokens"], theirs["cacheReadTokens"], theirs["outputTokens"]) == (
        usage["input_tokens"],
        usage["cache_read_input_tokens"],
        usage["output_tokens"] - thoughts,
    )
    # ccusage prices the thinking as output all the same: the costs are equal
    assert session["cost_usd"] == pytest.approx(theirs["totalCost"], rel=1e-9)
    output = DEFAULT_PRICES["gemini-2.5-pro"].output / 1_000_000
    assert session["cost_usd"] == pytest.approx(
        (2_200 * 1.25 + 11_000 * 0.125) / 1_000_000 + 58 * output, rel=1e-9
    )
