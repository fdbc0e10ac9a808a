"""``ctxrelay run`` with a real provider (official SDK, real HTTP) against our local wire
servers: a session crosses the warning and the handoff target at the right dispatches
with cache tokens counted, hands off to a fresh window, and survives provider failures
with nothing lost in the store."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.cli import main
from ctxrelay.pricing import DEFAULT_PRICES, cost
from ctxrelay.runtime.model import Usage
from ctxrelay.store import open_store
from ctxrelay.testing import AnthropicServer, Fault, LocalServer, OpenAIServer, Step, ToolUse
from tests.e2e._usage import StepUsage

pytestmark = pytest.mark.e2e

MARKER = "alpha-content-marker"
NOTES = "notes: a.txt was checked, next: report"


@dataclass(frozen=True)
class Wire:
    provider: str
    model: str
    server: Callable[..., LocalServer]
    route: str


WIRES = {
    "anthropic": Wire("anthropic", "claude-opus-4-6", AnthropicServer, "/v1/messages"),
    "openai": Wire("openai", "gpt-4.1", OpenAIServer, "/v1/responses"),
}


@pytest.fixture(params=sorted(WIRES))
def wire(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Wire:
    pytest.importorskip(request.param)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    return WIRES[request.param]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text(MARKER + "\n")
    return ws


def read() -> list[ToolUse]:
    return [ToolUse("read_file", {"path": "a.txt"})]


# limit 100,000, reserve 10,000, threshold 60: usable 90,000 · target 60,000 · warning 50,000.
BUDGET = ["--limit", "100000", "--reserve", "10000", "--threshold", "60"]
STEPS = [
    Step(
        tool_calls=read(),
        input_tokens=100,
        cache_creation_input_tokens=5_000,
        cache_read_input_tokens=20_000,
    ),
    Step(
        tool_calls=read(),
        input_tokens=100,
        cache_creation_input_tokens=7_000,
        cache_read_input_tokens=45_000,
    ),
    Step(
        tool_calls=read(),
        input_tokens=100,
        cache_creation_input_tokens=6_000,
        cache_read_input_tokens=55_000,
    ),
    Step(
        tool_calls=[ToolUse("write_file", {"path": "context-notes.md", "content": NOTES})],
        input_tokens=100,
        cache_read_input_tokens=62_000,
    ),
    Step(tool_calls=[ToolUse("new_context", {})], input_tokens=100, cache_read_input_tokens=63_000),
    Step(text="All done.", input_tokens=900, cache_creation_input_tokens=2_000),
]
CONTEXTS = [25_100, 52_100, 61_100, 62_100, 63_100, 2_900]


def run_argv(wire: Wire, server: LocalServer, ws: Path, *extra: str) -> list[str]:
    """``ctxrelay run`` on ``wire``'s provider at ``server``, in ``ws``, with JSON events."""
    return [
        "run",
        "--model",
        f"{wire.provider}:{wire.model}",
        "--base-url",
        server.base_url,  # type: ignore[attr-defined]
        "--workspace",
        str(ws),
        "--db",
        str(ws.parent / "sessions.db"),
        "--json",
        *extra,
    ]


def run(
    capsys: pytest.CaptureFixture[str], wire: Wire, server: LocalServer, ws: Path, *extra: str
) -> tuple[int, list[dict[str, Any]], str]:
    code = main(run_argv(wire, server, ws, "--yes", *extra))
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def show(capsys: pytest.CaptureFixture[str], ws: Path, session_id: str) -> dict[str, Any]:
    assert (
        main(["sessions", "show", session_id, "--db", str(ws.parent / "sessions.db"), "--json"])
        == 0
    )
    shown: dict[str, Any] = json.loads(capsys.readouterr().out)
    return shown


def test_session_crosses_warning_and_handoff_with_cache_tokens(
    wire: Wire, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with wire.server(STEPS) as server:
        code, events, err = run(capsys, wire, server, workspace, *BUDGET, "read a.txt")
        requests = server.requests_to(wire.route)
    assert code == 0, err
    start = events[0]
    assert (start["handoff_target"], start["warning_at"], start["usable_limit"]) == (
        60_000,
        50_000,
        90_000,
    )
    dispatches = [
        (e["window"], e["decision"], e["stage"]) for e in events if e["event"] == "dispatch"
    ]
    assert dispatches == [
        (1, "continue", None),
        (1, "continue", None),
        (1, "warn", "warning"),  # 52,100 reported + appended ≥ 50,000
        (1, "warn", "handoff"),  # 61,100 reported + appended ≥ 60,000
        (1, "continue", None),  # the handoff is claimed: no second request
        (2, "continue", None),  # the fresh window
    ]
    tokens = [e["tokens"] for e in events if e["event"] == "dispatch"]
    # Each dispatch counts the last reported context (input + cache writes + cache reads)
    # plus the estimate of what was appended since: never less than the report.
    for before, after in zip(CONTEXTS[:4], tokens[1:5], strict=True):
        assert before <= after < before + 2_000
    responses = [e for e in events if e["event"] == "response"]
    assert [r["context_tokens"] for r in responses] == CONTEXTS
    (rollover,) = [e for e in events if e["event"] == "rollover"]
    assert (rollover["from_window"], rollover["to_window"], rollover["reason"]) == (
        1,
        2,
        "new_context",
    )
    assert events[-1]["event"] == "end"
    assert events[-1]["status"] == "done"

    # The advisories went to the model: the 3rd request carries the warning row's text,
    # the 4th the handoff request's; window 2 starts with the notes, not the transcript.
    session = show(capsys, workspace, events[-1]["session_id"])
    first, second = session["windows"]
    assert first["seal_reason"] == "new_context"
    assert second["seal_reason"] is None
    advisories = [r for r in first["rows"] if r["kind"] == "warning"]
    assert [bool(r["metadata"].get("handoff")) for r in advisories] == [False, True]
    assert advisories[0]["text"] in json.dumps(requests[2].body, ensure_ascii=False)
    assert advisories[0]["text"] not in json.dumps(requests[1].body, ensure_ascii=False)
    assert advisories[1]["text"] in json.dumps(requests[3].body, ensure_ascii=False)
    fresh = json.dumps(requests[5].body, ensure_ascii=False)
    assert NOTES in fresh
    assert MARKER not in fresh

    # Usage with cache fields is stored per response and priced from the one table.
    usages = [
        r["metadata"]["usage"]
        for w in session["windows"]
        for r in w["rows"]
        if r["kind"] == "assistant"
    ]
    assert [
        sum(
            u[k] for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        for u in usages
    ] == CONTEXTS
    reads = [u["cache_read_input_tokens"] for u in usages]
    assert reads == [s.cache_read_input_tokens for s in STEPS]
    prices = DEFAULT_PRICES.lookup(wire.model)
    assert prices is not None
    expected = sum(
        cost(
            Usage(
                u["input_tokens"],
                u["output_tokens"],
                u["cache_creation_input_tokens"],
                u["cache_read_input_tokens"],
            ),
            prices,
        )
        for u in usages
    )
    assert events[-1]["cost_usd"] == pytest.approx(expected)
    assert expected > 0


def test_anthropic_requests_carry_cache_breakpoints(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    wire = WIRES["anthropic"]
    with wire.server(STEPS) as server:
        code, _, err = run(capsys, wire, server, workspace, *BUDGET, "read a.txt")
        requests = server.requests_to(wire.route)
    assert code == 0, err
    for request in requests:
        body = request.body
        assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
        assert "cache_control" in body["messages"][0]["content"][-1]  # the window's prefix
        assert "cache_control" in body["messages"][-1]["content"][-1]  # the tail
        assert body["max_tokens"] == 10_000  # the output reserve


@pytest.mark.parametrize(
    "case",
    [
        (Fault.http(401), (), "rejected the API key"),
        (Fault.http(500), ("--max-retries", "0"), "failed (500"),
        (Fault.truncated(), ("--max-retries", "0"), "broke off"),
        (Fault.stall_for(20), ("--timeout", "0.5"), "did not answer within 0.5 s"),
    ],
    ids=["401", "500", "malformed-stream", "timeout"],
)
def test_provider_failure_loses_nothing_and_resumes(
    wire: Wire,
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
    case: tuple[Fault, tuple[str, ...], str],
) -> None:
    fault, flags, sentence = case
    steps = [
        Step(tool_calls=read(), input_tokens=50, cache_read_input_tokens=1_000),
        Step(text="x" * 40, fault=fault),
        Step(text="Finished after the failure.", input_tokens=60, cache_read_input_tokens=1_200),
    ]
    with wire.server(steps) as server:
        code, events, err = run(capsys, wire, server, workspace, *BUDGET, *flags, "read a.txt")
        assert code == 1
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert sentence in lines[0]
        assert "Traceback" not in err
        session_id = events[0]["session_id"]
        before = show(capsys, workspace, session_id)
        kinds = [r["kind"] for r in before["windows"][0]["rows"]]
        # The task, the first response, its tool call and result are all stored.
        assert kinds[:4] == ["user", "assistant", "tool_call", "tool_result"]
        assert MARKER in before["windows"][0]["rows"][3]["text"]

        code, events, err = run(capsys, wire, server, workspace, "--resume", session_id)
        assert code == 0, err
        assert events[-1]["status"] == "done"
    after = show(capsys, workspace, session_id)
    rows = after["windows"][0]["rows"]
    assert rows[: len(kinds)] == before["windows"][0]["rows"]
    assert rows[-1]["text"] == "Finished after the failure."
    assert [r["kind"] for r in rows].count("assistant") == 2  # the failed call left no row


def test_429_then_success_within_one_run(
    wire: Wire, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = [
        Step(fault=Fault.http(429, retry_after=0.05)),
        Step(text="Answered on the retry.", input_tokens=10, cache_read_input_tokens=500),
    ]
    with wire.server(steps) as server:
        code, events, err = run(capsys, wire, server, workspace, *BUDGET, "hello")
        assert len(server.requests_to(wire.route)) == 2
    assert code == 0, err
    (response,) = [e for e in events if e["event"] == "response"]
    assert response["text"] == "Answered on the retry."
    assert response["context_tokens"] == 510


def tool_batches(events: list[dict[str, Any]]) -> list[list[tuple[str, bool]]]:
    """The ``(name, is_error)`` of the tool events after each response, sorted per
    response: the order within a batch is the order the calls finished in."""
    batches: list[list[tuple[str, bool]]] = []
    for event in events:
        if event["event"] == "response" and event["tool_calls"]:
            batches.append([])
        elif event["event"] == "tool":
            batches[-1].append((event["name"], event["is_error"]))
    return [sorted(batch) for batch in batches]


def test_coding_agent_edits_and_runs_commands(
    wire: Wire, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "app.py").write_text("print('hello')\n")
    steps = [
        Step(tool_calls=[ToolUse("list_files", {}), ToolUse("grep", {"pattern": "hello"})]),
        Step(
            tool_calls=[
                ToolUse(
                    "edit_file", {"path": "app.py", "old_string": "hello", "new_string": "relay"}
                )
            ]
        ),
        Step(tool_calls=[ToolUse("bash", {"command": "python3 app.py"})]),
        Step(text="It prints relay now."),
    ]
    with wire.server(steps) as server:
        code, events, err = run(capsys, wire, server, workspace, *BUDGET, "change the greeting")
        requests = server.requests_to(wire.route)
    assert code == 0, err
    assert (workspace / "app.py").read_text() == "print('relay')\n"
    # Calls of one response run concurrently and are reported as they finish: compare
    # each response's batch as a multiset, the batches themselves in order.
    assert tool_batches(events) == [
        sorted([("list_files", False), ("grep", False)]),
        [("edit_file", False)],
        [("bash", False)],
    ]
    offered = json.dumps(requests[0].body["tools"])
    for name in (
        "read_file",
        "write_file",
        "edit_file",
        "list_files",
        "grep",
        "bash",
        "new_context",
    ):
        assert f'"{name}"' in offered
    # The model saw each result: the listing, the match, and the command's output.
    assert "app.py:1: print('hello')" in json.dumps(requests[1].body)
    assert "exit code 0\\nrelay" in json.dumps(requests[3].body)


def test_without_yes_a_command_is_declined_when_no_one_can_answer(
    wire: Wire, workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    steps = [
        Step(tool_calls=[ToolUse("bash", {"command": "touch should-not-exist"})]),
        Step(text="ok"),
    ]
    with wire.server(steps) as server:
        argv_without_yes = run_argv(wire, server, workspace, *BUDGET, "try it")
        assert main(argv_without_yes) == 0
        events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert not (workspace / "should-not-exist").exists()
    (tool,) = [e for e in events if e["event"] == "tool"]
    assert tool["is_error"] is True
    assert "declined" in tool["summary"]


def test_max_cost_counts_cache_tokens_and_resumes_with_a_higher_cap(
    wire: Wire, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Mostly cache reads: a cap that ignored them would never trip.
    heavy: StepUsage = {"input_tokens": 10, "cache_read_input_tokens": 200_000}
    steps = [
        Step(tool_calls=read(), **heavy),
        Step(tool_calls=read(), **heavy),
        Step(text="done", **heavy),
    ]
    prices = DEFAULT_PRICES.lookup(wire.model)
    assert prices is not None
    one = cost(Usage(10, 0, 0, 200_000), prices)
    cap = f"{one * 1.5:.6f}"  # reached after the second response
    big = ["--limit", "1000000", "--reserve", "10000"]
    with wire.server(steps) as server:
        code, events, err = run(
            capsys, wire, server, workspace, *big, "--max-cost", cap, "read a.txt"
        )
        assert code == 3, err  # paused by a cap: resumable, not an error
        assert "--max-cost" in err
        responses = [e for e in events if e["event"] == "response"]
        assert len(responses) == 2
        assert responses[-1]["session_cost_usd"] >= float(cap)
        session_id = events[0]["session_id"]
        code, events, err = run(
            capsys, wire, server, workspace, "--resume", session_id, "--max-cost", "10"
        )
    assert code == 0, err
    assert events[-1]["status"] == "done"
    assert events[-1]["cost_usd"] == pytest.approx(3 * one, rel=0.05)


def test_resume_reuses_the_provider_options_of_the_session_but_never_its_key(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("openai")
    secret = "sk-local-secret-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    db = str(workspace.parent / "sessions.db")
    steps = [
        Step(tool_calls=read(), input_tokens=50),
        Step(text="Done on the remembered server.", input_tokens=60),
    ]
    with OpenAIServer(steps, api_key=secret) as server:
        first = ["run", "--model", "openai:gpt-4.1", "--base-url", server.base_url,
                 "--timeout", "30", "--max-retries", "1", "--workspace", str(workspace),
                 "--db", db, "--json", *BUDGET, "--max-turns", "1", "read a.txt"]  # fmt: skip
        assert main(first) == 3  # paused by --max-turns after the first response
        session_id = json.loads(capsys.readouterr().out.splitlines()[0])["session_id"]
        # No --base-url: without the stored one the SDK would go to its public default.
        again = ["run", "--resume", session_id, "--db", db, "--json", "--max-turns", "5"]
        code = main(again)
        out, err = capsys.readouterr()
        assert code == 0, err
        assert len(server.requests_to("/v1/responses")) == 2
        base_url = server.base_url
    events = [json.loads(line) for line in out.splitlines()]
    assert events[-1]["status"] == "done"
    store = open_store(db)
    try:
        stored = store.get_session(session_id).metadata
    finally:
        store.close()
    assert stored["provider_options"] == {
        "base_url": base_url,
        "timeout": 30.0,
        "max_retries": 1,
    }
    assert secret.encode() not in Path(db).read_bytes()


def test_a_flag_on_resume_overrides_the_stored_provider_option(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    db = str(workspace.parent / "sessions.db")
    with OpenAIServer([Step(tool_calls=read(), input_tokens=50)]) as old:
        first = ["run", "--model", "openai:gpt-4.1", "--base-url", old.base_url,
                 "--workspace", str(workspace), "--db", db, "--json", *BUDGET,
                 "--max-turns", "1", "read a.txt"]  # fmt: skip
        assert main(first) == 3
        session_id = json.loads(capsys.readouterr().out.splitlines()[0])["session_id"]
    with OpenAIServer([Step(text="Moved.", input_tokens=60)]) as moved:
        again = ["run", "--resume", session_id, "--base-url", moved.base_url, "--db", db,
                 "--json", "--max-turns", "5"]  # fmt: skip
        code = main(again)
        _, err = capsys.readouterr()
        assert code == 0, err
        assert len(moved.requests_to("/v1/responses")) == 1
