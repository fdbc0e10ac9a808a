"""``ctxrelay analyze`` on the database the real OpenCode wrote: two ``opencode run``s
offline, then the report's tokens against what the server sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.cli import main
from ctxrelay.testing import OpenAIServer, Script, Step, ToolUse
from tests.e2e._opencode import MODEL, is_title_request, opencode_home, title_router

USAGE_KEYS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)
# The main agent's steps, each with its usage as the API reports it: the first run calls
# a tool and answers, the second answers at once.
STEPS = [
    Step(
        tool_calls=[ToolUse("bash", {"command": "echo hello", "description": "Say hello"})],
        input_tokens=1200,
        cache_read_input_tokens=3000,
        output_tokens=40,
    ),
    Step(text="It said hello.", input_tokens=300, cache_read_input_tokens=4200, output_tokens=12),
    Step(text="Nothing to do.", input_tokens=900, cache_read_input_tokens=2000, output_tokens=7),
]


def test_analyze_reads_what_opencode_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAIServer(Script(STEPS, router=title_router)) as server:
        home = opencode_home(tmp_path, server)
        for prompt in ("run echo hello", "nothing"):
            done = home.run(prompt)
            assert done.returncode == 0, done.stderr[-3000:]
        main_requests = [
            r for r in server.requests_to("/v1/chat/completions") if not is_title_request(r.body)
        ]
    assert len(main_requests) == len(STEPS)
    assert home.database.is_file()

    assert main(["analyze", "--json", str(home.database)]) == 0
    doc = json.loads(capsys.readouterr().out)
    sessions = doc["sessions"]
    assert [s["format"] for s in sessions] == ["opencode", "opencode"]
    assert [s["requests"] for s in sessions] == [2, 1]
    assert {s["project"] for s in sessions} == {str(home.project)}
    assert {s["model"] for s in sessions} == {MODEL}
    total = doc["totals"]["total"]["usage"]
    assert {key: total[key] for key in USAGE_KEYS} == {
        "input_tokens": sum(s.input_tokens or 0 for s in STEPS),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": sum(s.cache_read_input_tokens for s in STEPS),
        "output_tokens": sum(s.output_tokens or 0 for s in STEPS),
    }
    # OpenCode priced each message at the config's prices (per million tokens)
    recorded = sum(
        ((s.input_tokens or 0) * 1 + (s.output_tokens or 0) * 2 + s.cache_read_input_tokens * 0.1)
        / 1e6
        for s in STEPS
    )
    assert sum(s["recorded_cost_usd"] for s in sessions) == pytest.approx(recorded, abs=1e-9)
    # the test model is in no price table: ctxrelay names it rather than guess
    assert doc["totals"]["unpriced_models"] == [MODEL]
    assert doc["skipped"] == []
