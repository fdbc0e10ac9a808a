"""``ctxrelay analyze`` on the database the real OpenCode wrote: two ``opencode run``s
offline, then the report's tokens against what the server sent, the reader on that
database, and ccusage's ``opencode`` report on it."""

from __future__ import annotations

import json

import pytest

from ctxrelay.cli import main
from ctxrelay.testing import OpenAIServer, Script, Step, ToolUse
from ctxrelay.transcripts import read_opencode
from tests.analyze._ccusage import opencode_sessions, token_counts
from tests.e2e._opencode import (
    MODEL,
    OpenCodeHome,
    is_title_request,
    opencode_home,
    pinned_version,
    title_router,
)

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


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> OpenCodeHome:
    """Two ``opencode run``s offline (one session each), the server's requests checked."""
    tmp_path = tmp_path_factory.mktemp("opencode")
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
    return home


def test_analyze_reads_what_opencode_wrote(
    ran: OpenCodeHome, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["analyze", "--json", str(ran.database)]) == 0
    doc = json.loads(capsys.readouterr().out)
    sessions = doc["sessions"]
    assert [s["format"] for s in sessions] == ["opencode", "opencode"]
    assert [s["requests"] for s in sessions] == [2, 1]
    assert {s["project"] for s in sessions} == {str(ran.project)}
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


def test_the_reader_on_the_real_database_changes_nothing(ran: OpenCodeHome) -> None:
    files = sorted(ran.database.parent.glob("opencode.db*"))
    before = {f.name: f.read_bytes() for f in files}
    first, second = read_opencode(ran.database)
    assert {f.name: f.read_bytes() for f in files} == before
    for session in (first, second):
        t = session.transcript
        assert (t.format, t.version, t.cwd, t.parent_id) == (
            "opencode",
            pinned_version(),
            str(ran.project),
            None,
        )
        assert session.summaries == ()
    # each LLM step is its own assistant message, in the order the server answered them
    steps = [*first.transcript.responses, *second.transcript.responses]
    assert [r.usage.input_tokens for r in steps] == [s.input_tokens for s in STEPS]
    assert [r.usage.output_tokens for r in steps] == [s.output_tokens for s in STEPS]


def test_tokens_and_recorded_cost_equal_ccusage_opencode_report(
    ran: OpenCodeHome, capsys: pytest.CaptureFixture[str]
) -> None:
    theirs = opencode_sessions(ran.database.parent)
    assert main(["analyze", "--json", str(ran.database)]) == 0
    ours = {s["session_id"]: s for s in json.loads(capsys.readouterr().out)["sessions"]}
    assert set(theirs) == set(ours)
    for session_id, c in theirs.items():
        mine, its = token_counts(ours[session_id], c)
        assert mine == its, session_id
        # ccusage takes OpenCode's recorded cost for a model it has no price for
        assert ours[session_id]["recorded_cost_usd"] == pytest.approx(c["totalCost"], abs=1e-9)
