"""At the usable limit, main-session tool calls are denied except the handoff's own."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from ctxrelay.budget import Budget
from ctxrelay.budget.bounds import CALL_LINE_WAIT_S
from ctxrelay.budget.bounds import MAIN_OUTPUT_RESERVE as OUTPUT_RESERVE
from ctxrelay.claude import _state
from ctxrelay.claude._limit import deny_reason, usable_limit
from tests.claude._handoff import SESSION, Transcript, isolate, run_hook

if TYPE_CHECKING:
    from ctxrelay.claude._events._payloads import PreToolUsePayload

WINDOW = 200_000
LIMIT = WINDOW - OUTPUT_RESERVE


@pytest.fixture
def project(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return isolate(monkeypatch, tmp_path)


def _payload(
    t: Transcript, project: Path, tool: str, tool_input: dict[str, Any], **kw: Any
) -> PreToolUsePayload:
    payload: PreToolUsePayload = {
        "session_id": SESSION,
        "transcript_path": str(t.path),
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
    }
    return cast("PreToolUsePayload", {**payload, **kw})


def _at(tmp_path: Path, context: int) -> Transcript:
    t = Transcript(tmp_path / f"t{context}.jsonl")
    t.prompt("work")
    t.assistant(context=context, tools=[("Bash", {"command": "ls"})])
    return t


def test_usable_limit_is_the_policy_cores() -> None:
    assert usable_limit(WINDOW) == Budget(limit=WINDOW, output_reserve=OUTPUT_RESERVE).usable_limit
    assert usable_limit(1_000_000) == 1_000_000 - OUTPUT_RESERVE
    assert usable_limit(50_000) == 37_500  # a small configured window keeps a quarter


def test_below_the_limit_everything_runs(project: Path, tmp_path: Path) -> None:
    t = _at(tmp_path, LIMIT - 1)
    assert deny_reason(_payload(t, project, "Bash", {"command": "ls"})) is None


def test_at_the_limit_tools_are_denied_with_the_handoff_path(project: Path, tmp_path: Path) -> None:
    t = _at(tmp_path, LIMIT)
    reason = deny_reason(_payload(t, project, "Bash", {"command": "ls"}))
    assert reason is not None
    assert f"{LIMIT:,}" in reason
    assert f"{LIMIT:,} tokens" in reason
    assert "## Next step" in reason
    path = next(w for w in reason.split() if w.endswith(".md"))
    assert Path(path).parent == project / ".ctxrelay" / "handoff"
    # Every denial names the same file until it is written.
    again = deny_reason(_payload(t, project, "Read", {"file_path": "/x"}))
    assert again is not None
    assert path in again
    # Writing the handoff, running the skill, and task bookkeeping are allowed.
    assert deny_reason(_payload(t, project, "Write", {"file_path": path, "content": "x"})) is None
    assert deny_reason(_payload(t, project, "Skill", {"skill": "ctxrelay:handoff"})) is None
    assert deny_reason(_payload(t, project, "TaskUpdate", {"status": "completed"})) is None
    # Writing anywhere else is not.
    assert deny_reason(_payload(t, project, "Write", {"file_path": str(project / "a.py")}))
    # Once written, the next denial names a fresh file.
    Path(path).write_text("# Handoff\n")
    third = deny_reason(_payload(t, project, "Bash", {"command": "ls"}))
    assert third is not None
    assert path not in third


def test_the_file_the_limit_asks_for_is_this_sessions_to_write(
    project: Path, tmp_path: Path
) -> None:
    from ctxrelay.claude import handoff
    from ctxrelay.hooks.chain import ChainLink

    t = _at(tmp_path, LIMIT)
    reason = deny_reason(_payload(t, project, "Bash", {"command": "ls"}))
    assert reason is not None
    path = Path(next(w for w in reason.split() if w.endswith(".md")))
    # Another session's start leaves it to this one while it runs (session_start).
    assert handoff.reserved_by(project, path.name) == ChainLink("claude", SESSION, str(t.path))


def test_subagents_off_and_big_windows_are_left_alone(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    t = _at(tmp_path, LIMIT)
    assert deny_reason(_payload(t, project, "Bash", {"command": "ls"}, agent_id="a1")) is None
    _state.record_window(SESSION, None, 1_000_000)
    assert deny_reason(_payload(t, project, "Bash", {"command": "ls"})) is None
    monkeypatch.setenv("CTXRELAY_CONTEXT_WINDOW", str(WINDOW))
    assert deny_reason(_payload(t, project, "Bash", {"command": "ls"})) is not None
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "off")
    assert deny_reason(_payload(t, project, "Bash", {"command": "ls"})) is None


def test_missing_transcript_or_bad_payload_allows(project: Path, tmp_path: Path) -> None:
    missing = Transcript(tmp_path / "empty.jsonl")
    assert deny_reason(_payload(missing, project, "Bash", {"command": "ls"})) is None
    assert deny_reason({"tool_name": "Bash"}) is None  # type: ignore[typeddict-item]
    t = _at(tmp_path, LIMIT)
    assert deny_reason(_payload(t, project, "Bash", "not a dict")) is None  # type: ignore[arg-type]


def test_the_limit_check_imports_nothing_heavy(project: Path, tmp_path: Path) -> None:
    import json as _json
    import subprocess
    import sys

    t = _at(tmp_path, 20_000)
    payload = _payload(t, project, "Bash", {"command": "ls"})
    # A first call seeds the cache (full path), as SessionStart would.
    assert deny_reason(payload) is None
    probe = (
        "import io, json, sys\n"
        "from ctxrelay.claude import hook\n"
        "out = io.StringIO()\n"
        "hook.main(io.StringIO(sys.argv[1]), out)\n"
        "heavy = [m for m in ('rich', 'sqlite3', 'ctxrelay.analyze', 'ctxrelay.store', "
        "'ctxrelay.runtime', 'ctxrelay.cli') if m in sys.modules]\n"
        "print(json.dumps({'out': out.getvalue(), 'heavy': heavy}))\n"
    )
    payload["tool_name"] = "Grep"  # a tool no guard reads: only the limit check runs
    payload["tool_input"] = {"pattern": "x"}
    done = subprocess.run(
        [sys.executable, "-c", probe, _json.dumps(payload)],
        capture_output=True,
        text=True,
        check=True,
    )
    result = _json.loads(done.stdout)
    assert result == {"out": "", "heavy": []}


def test_the_fast_tail_read_agrees_with_the_shared_reader() -> None:
    from ctxrelay.transcripts import latest_context, tail_context
    from tests.conftest import corpus_path

    root = corpus_path("corpora")
    paths = sorted((root / "claude-code-transcripts" / "spotter").glob("*.jsonl"))
    paths += sorted((root / "claude-code-capture" / "projects").glob("*.jsonl"))
    assert paths
    for path in paths:
        tokens, model, found = tail_context(str(path))
        reading = latest_context(path)
        if not found:
            continue
        expected = None if reading is None else reading.context_tokens
        assert tokens == expected, path.name
        if tokens is not None:
            assert reading is not None
            assert model == reading.model, path.name


def test_a_transcript_without_responses_is_answered_from_its_tail(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A tail read that began at the start of the file saw all of it: a new session's first
    # calls need neither the config nor the shared reader.
    from ctxrelay.claude import _limit
    from ctxrelay.transcripts import tail_context

    def full_check(*args: object, **kwargs: object) -> str | None:
        raise AssertionError("the full path ran")

    t = Transcript(tmp_path / "fresh.jsonl")
    t.prompt("work")
    monkeypatch.setattr(_limit, "_full_check", full_check)
    assert deny_reason(_payload(t, project, "Bash", {"command": "ls"})) is None
    assert tail_context(str(t.path))[2] is True
    (tmp_path / "empty.jsonl").write_text("")
    assert tail_context(str(tmp_path / "empty.jsonl")) == (None, None, True)


# -- the response that made the call, written after the hook starts ----------------------


def _call_record(call: str, context: int) -> dict[str, Any]:
    """The line of the response that made ``call`` (a main-chain tool_use block)."""
    usage = {"input_tokens": 10, "cache_creation_input_tokens": 0}
    usage["cache_read_input_tokens"] = context - 10
    block = {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": "ls"}}
    message = {"id": f"msg_{call}", "model": "claude-sonnet-4-5", "content": [block]}
    return {"type": "assistant", "isSidechain": False, "message": {**message, "usage": usage}}


def _write_later(path: Path, record: dict[str, Any], delay_s: float) -> threading.Timer:
    """Claude Code's batched transcript write: ``record`` lands ``delay_s`` from now."""

    def append() -> None:
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")

    timer = threading.Timer(delay_s, append)
    timer.start()
    return timer


def _started(project: Path, transcript: Path) -> None:
    """As in a real session: SessionStart ran first and cached the usable limit."""
    start = {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    assert run_hook(start) is None
    assert isinstance(_state.session_state(SESSION).get("usable_limit"), int)


@pytest.mark.parametrize("exists", [True, False], ids=["below-before", "no-transcript-yet"])
def test_a_call_written_150_ms_after_the_hook_starts_is_still_denied(
    project: Path, tmp_path: Path, exists: bool
) -> None:
    # The failing CI run: the hook started before Claude Code wrote the response that
    # made the call (sometimes before it created the file at all).
    path = tmp_path / "late.jsonl"
    if exists:
        t = Transcript(path)
        t.prompt("work")
        t.assistant(context=20_000, tools=[("Bash", {"command": "ls"})])
    _started(project, path)
    payload = {
        "session_id": SESSION,
        "transcript_path": str(path),
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "echo hi > out.txt"},
        "tool_use_id": "toolu_late",
    }
    timer = _write_later(path, _call_record("toolu_late", LIMIT + 500), 0.15)
    try:
        answer = run_hook(payload)
    finally:
        timer.join()
    assert answer is not None
    reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert f"the context is {LIMIT + 500:,} tokens" in reason


def test_the_calls_own_usage_is_read_not_the_previous_responses(
    project: Path, tmp_path: Path
) -> None:
    t = _at(tmp_path, LIMIT + 2_000)  # an earlier response over the limit (then a handoff)
    _started(project, t.path)
    with t.path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "system", "subtype": "compact_boundary"}) + "\n")
        fh.write(json.dumps(_call_record("toolu_now", 30_000)) + "\n")
    payload = _payload(t, project, "Bash", {"command": "ls"}, tool_use_id="toolu_now")
    assert deny_reason(payload) is None


def test_a_call_that_never_reaches_the_transcript_fails_open_within_the_bound(
    project: Path, tmp_path: Path
) -> None:
    t = _at(tmp_path, 20_000)
    _started(project, t.path)
    payload = _payload(t, project, "Bash", {"command": "ls"}, tool_use_id="toolu_never")
    start = time.monotonic()
    assert run_hook(payload) is None  # allowed: the hook never denies on a guess
    # A generous ceiling (a loaded machine), not a timing assertion: it gave up.
    assert time.monotonic() - start < CALL_LINE_WAIT_S + 5


def _denied(answer: dict[str, Any] | None) -> str | None:
    if answer is None:
        return None
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    return str(answer["hookSpecificOutput"]["permissionDecisionReason"])


def test_a_call_whose_result_could_pass_the_limit_is_denied(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Below the usable limit, one tool result could still jump the gap to Claude Code's
    # own refusal to send: what the call can return at most is counted too.
    t = _at(tmp_path, LIMIT - 5_000)
    _started(project, t.path)
    bash = _payload(t, project, "Bash", {"command": "make test"})
    monkeypatch.setenv("BASH_MAX_OUTPUT_LENGTH", "4000")  # the installed cap: 1,333 tokens
    assert run_hook(bash) is None
    monkeypatch.setenv("BASH_MAX_OUTPUT_LENGTH", "150000")
    reason = _denied(run_hook(bash))
    assert reason is not None
    assert f"the context is {LIMIT - 5_000:,} tokens, and this call could add up to 50,000" in (
        reason
    )
    assert "Hand off now" in reason
    path = next(w for w in reason.split() if w.endswith(".md"))
    # The handoff's own write still goes through.
    write = _payload(t, project, "Write", {"file_path": path, "content": "# Handoff\n"})
    assert run_hook(write) is None
    # A Read counts the lines it shows: a small one fits, a whole big file does not, the
    # same file's first lines do.
    (project / "small.txt").write_text("one line\n" * 30)
    big = project / "big.txt"
    big.write_text("a line of the log, forty bytes long....\n" * 1_000)
    assert run_hook(_payload(t, project, "Read", {"file_path": str(project / "small.txt")})) is None
    reason = _denied(run_hook(_payload(t, project, "Read", {"file_path": str(big)})))
    assert reason is not None
    assert "this call could add up to 15,666" in reason
    head = _payload(t, project, "Read", {"file_path": str(big), "limit": 50})
    assert run_hook(head) is None
