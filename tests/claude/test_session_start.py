"""SessionStart: a handoff no session has started from is offered at the next start of its
chain (``/clear``) or of the project (startup, resume), and consumed only once a session's
first request went out with it."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxrelay.claude import handoff
from ctxrelay.claude._events import session_start
from ctxrelay.claude.host import injection_mark, started_in
from ctxrelay.hooks import chain as _chain
from ctxrelay.hooks.handoff import INJECT_MAX_BYTES
from tests.claude._handoff import isolate, run_hook


@pytest.fixture
def project(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return isolate(monkeypatch, tmp_path)


WRITER = "writer-1"


def _start(
    project: Path, source: str = "clear", session_id: str = "fresh-1"
) -> dict[str, object] | None:
    return run_hook(
        {
            "session_id": session_id,
            "transcript_path": str(project / f"{session_id}.jsonl"),
            "cwd": str(project),
            "hook_event_name": "SessionStart",
            "source": source,
        }
    )


def _write(project: Path, body: str, by: str | None = WRITER) -> Path:
    """A handoff file; ``by``: the session whose Stop saw it written."""
    path = handoff.new_handoff_path(project)
    path.write_text(body)
    if by is not None:
        _chain.record_written(project, path.name, _chain.ChainLink("claude", by, f"{by}.jsonl"))
    return path


def _context(answer: dict[str, object] | None) -> str:
    assert answer is not None
    out = answer["hookSpecificOutput"]
    assert isinstance(out, dict)
    assert out["hookEventName"] == "SessionStart"
    text = out["additionalContext"]
    assert isinstance(text, str)
    return text


def _first_request(project: Path, session_id: str, path: Path, *, sent: bool) -> None:
    """The fresh session's transcript as Claude Code 2.1.332 leaves it: the injection's
    attachment line and, once its first request went out, an ``api-request`` line."""
    context = f"…{injection_mark(path)}…"
    lines: list[dict[str, object]] = [
        {"type": "mode", "mode": "normal"},
        {
            "type": "attachment",
            "attachment": {
                "type": "hook_additional_context",
                "content": [context],
                "hookEvent": "SessionStart",
            },
        },
        {"type": "user", "message": {"role": "user", "content": "go on"}},
    ]
    if sent:
        lines.append({"type": "api-request", "querySource": "repl_main_thread"})
    (project / f"{session_id}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


@pytest.fixture
def pid(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every hook runs under this (live) process, as under one Claude Code."""
    monkeypatch.setenv("CLAUDE_PID", str(os.getpid()))


def test_clear_after_the_writer_injects_the_latest_handoff_and_names_it(
    project: Path, pid: None
) -> None:
    _write(project, "# Handoff\n## Next step\nOLDER-STEP\n")
    newest = _write(project, "# Handoff\n## Goal\nship v2\n## Next step\nrun make test\n")
    _start(project, "startup", WRITER)  # the writer ran in this process
    answer = _start(project)
    context = _context(answer)
    assert str(newest) in context
    assert "ship v2" in context
    assert "run make test" in context
    assert "OLDER-STEP" not in context
    assert "mcp__ctxrelay__session_history" in context
    assert answer is not None
    assert answer["systemMessage"] == session_start.loaded_text(newest)
    # Not consumed until the fresh session's first request went out with it.
    assert handoff.latest_unconsumed(project) == newest
    _first_request(project, "fresh-1", newest, sent=True)
    fresh = _chain.ChainLink("claude", "fresh-1", str(project / "fresh-1.jsonl"))
    assert handoff.settle(project) == [(newest.name, fresh)]
    assert handoff.latest_unconsumed(project) is None
    assert _start(project, session_id="fresh-2") is None
    chain = _chain.chain(project, "fresh-1")
    assert [x.session_id for x in chain] == [WRITER, "fresh-1"]


def test_a_crash_before_the_first_request_leaves_the_handoff_for_the_next_start(
    project: Path, pid: None
) -> None:
    path = _write(project, "# Handoff\n## Next step\nrun it\n")
    _start(project, "startup", WRITER)
    _context(_start(project))  # /clear: injected into fresh-1 ...
    _first_request(project, "fresh-1", path, sent=False)  # ... killed before its request
    # A plain `claude` (another process): offered and injected again (auto mode).
    os.environ["CTXRELAY_MAIN_HANDOVER"] = "auto"
    try:
        again = _start(project, "startup", "fresh-2")
        assert str(path) in _context(again)
        _first_request(project, "fresh-2", path, sent=True)
        assert _start(project, "startup", "fresh-3") is None  # used once, by fresh-2
    finally:
        del os.environ["CTXRELAY_MAIN_HANDOVER"]
    assert _chain.started_by(project, path.name) == _chain.ChainLink(
        "claude", "fresh-2", str(project / "fresh-2.jsonl")
    )


def test_an_unrelated_sessions_clear_never_picks_up_the_handoff(project: Path, pid: None) -> None:
    _write(project, "# Handoff\n")
    _start(project, "clear", "other-1")  # this process ran another session ...
    assert _start(project, "clear", "other-2") is None  # ... whose /clear takes nothing
    os.environ.pop("CLAUDE_PID")
    assert _start(project, "clear", "other-3") is None  # nor a /clear with no process


def test_a_restart_offers_the_waiting_handoff(
    project: Path, pid: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(project, "# Handoff\n")
    # manual: one line on how to continue or drop it; this session's /clear takes it
    offer = _start(project, "startup", "s1")
    assert offer == {"systemMessage": session_start.offer_text(path)}
    assert "ctxrelay handoff drop" in session_start.offer_text(path)
    assert str(path) in _context(_start(project, "clear", "s2"))
    # the writer resumed (--continue): never injected into itself, told to /clear
    resumed = _start(project, "resume", WRITER)
    assert resumed == {"systemMessage": session_start.offer_text(path, writer=True)}
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "auto")
    assert _start(project, "resume", WRITER) == resumed
    # auto: another session's start injects it, with one line saying so
    auto = _start(project, "startup", "s3")
    assert str(path) in _context(auto)
    assert auto is not None
    assert auto["systemMessage"] == session_start.loaded_text(path)


def test_a_dropped_handoff_is_offered_no_more(project: Path, pid: None) -> None:
    path = _write(project, "# Handoff\n")
    assert handoff.drop(project, path)
    assert _start(project, "startup", "s1") is None
    assert not handoff.drop(project, path)


def test_a_crash_during_the_write_still_knows_the_writer(project: Path, pid: None) -> None:
    path = handoff.new_handoff_path(project)
    handoff.record_reserved(project, path, _chain.ChainLink("claude", WRITER, "w.jsonl"))
    path.write_text("# Handoff\n")  # written; the Stop that would see it never ran
    _start(project, "startup", WRITER)
    assert str(path) in _context(_start(project))
    assert _chain.written_by(project, path.name) == _chain.ChainLink("claude", WRITER, "w.jsonl")


def test_other_sources_and_off_inject_nothing(
    project: Path, pid: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(project, "# Handoff\n")
    _start(project, "startup", WRITER)
    assert _start(project, "compact", WRITER) is None
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "off")
    assert _start(project) is None
    assert _start(project, "startup", "s9") is None
    monkeypatch.delenv("CTXRELAY_MAIN_HANDOVER")
    _start(project, "startup", WRITER)
    assert _start(project) is not None


def test_a_long_handoff_is_cut_and_says_where_the_rest_is(project: Path, pid: None) -> None:
    path = _write(project, "# Handoff\n" + "x" * (INJECT_MAX_BYTES + 100))
    _start(project, "startup", WRITER)
    context = _context(_start(project))
    assert f"the rest is in {path}" in context
    assert len(context) < INJECT_MAX_BYTES + 3_000


def test_nothing_to_resume(project: Path) -> None:
    assert _start(project) is None
    _write(project, "")  # reserved and created empty: not a handoff yet
    assert _start(project) is None


def test_every_start_seeds_the_usable_limit_cache(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxrelay.claude import _state
    from ctxrelay.claude._limit import usable_limit

    assert _start(project, "startup") is None
    doc = _state.session_state("fresh-1").read()
    assert doc["usable_limit"] == usable_limit(200_000)
    assert doc["mode"] == "manual"
    monkeypatch.setenv("CTXRELAY_CONTEXT_WINDOW", "1000000")
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "off")
    assert _start(project, "resume") is None
    doc = _state.session_state("fresh-1").read()
    assert doc["usable_limit"] == usable_limit(1_000_000)
    assert doc["mode"] == "off"


def _started(project: Path, session_id: str) -> dict[str, object]:
    from ctxrelay.claude import _state

    payload = {
        "session_id": session_id,
        "transcript_path": str(project / "t.jsonl"),
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    assert run_hook(payload) is None
    return _state.session_state(session_id).read()


def test_a_start_seeded_from_the_last_one_sees_a_changed_setting(project: Path) -> None:
    from ctxrelay.claude._limit import usable_limit
    from ctxrelay.claude.config import set_value

    first = _started(project, "11111111-aaaa-4bbb-8ccc-000000000001")
    assert first["usable_limit"] == usable_limit(200_000)
    assert _started(project, "11111111-aaaa-4bbb-8ccc-000000000002") == first  # seeded
    set_value("context_window", "1000000", project_dir=project)
    third = _started(project, "11111111-aaaa-4bbb-8ccc-000000000003")
    assert third["usable_limit"] == usable_limit(1_000_000)
    set_value("main_handover", "off", project_dir=project)
    assert _started(project, "11111111-aaaa-4bbb-8ccc-000000000004")["mode"] == "off"


def test_the_fresh_sessions_stop_consumes_the_handoff_it_started_from(
    project: Path, pid: None
) -> None:
    from ctxrelay.claude import _state

    path = _write(project, "# Handoff\n")
    _start(project, "startup", WRITER)
    _context(_start(project))
    assert _state.session_state("fresh-1").get("injected") == path.name
    _first_request(project, "fresh-1", path, sent=True)
    stop = {
        "session_id": "fresh-1",
        "transcript_path": str(project / "fresh-1.jsonl"),
        "cwd": str(project),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    run_hook(stop)
    assert handoff.consumed(project, path.name)
    assert _state.session_state("fresh-1").get("injected") is None
    assert [x.session_id for x in _chain.chain(project, "fresh-1")] == [WRITER, "fresh-1"]


def test_started_in_reads_only_an_injection_followed_by_a_request(tmp_path: Path) -> None:
    path = tmp_path / "handoff-20261201T000000Z.md"
    assert not started_in(str(tmp_path / "missing.jsonl"), path)
    t = tmp_path / "t.jsonl"
    request = json.dumps({"type": "api-request"}) + "\n"
    t.write_text(request + "not json\n")  # a request before any injection
    assert not started_in(str(t), path)
    _first_request(tmp_path, "t", path, sent=False)
    with t.open("a") as fh:
        fh.write('{"type": "api-request-shape"}\n{"broken": "api-request"\n')
    assert not started_in(str(t), path)
    with t.open("a") as fh:
        fh.write(request)
    assert started_in(str(t), path)
    assert not started_in(str(t), tmp_path / "handoff-other.md")


def test_a_writer_resumed_after_another_session_used_its_handoff_does_not_clear(
    project: Path, pid: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxrelay.claude import _state

    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "auto")
    path = handoff.new_handoff_path(project)
    _state.session_state(WRITER).set("handoff", {"phase": "writing", "path": str(path)})
    path.write_text("# Handoff\n")  # killed during the write, before the Stop
    assert handoff.mark_consumed(project, path)  # a plain `claude` started from it
    (project / "w.jsonl").write_text('{"type": "mode"}\n')
    stop = {
        "session_id": WRITER,
        "transcript_path": str(project / "w.jsonl"),
        "cwd": str(project),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    assert run_hook(stop) is None  # no "handoff written", no clear for the mod
    assert _state.session_state(WRITER).get("handoff")["phase"] == "used"


def test_the_writer_resumed_is_left_for_the_user_to_clear(
    project: Path, pid: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxrelay.claude import _state

    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "auto")
    path = handoff.new_handoff_path(project)
    handoff.record_reserved(project, path, _chain.ChainLink("claude", WRITER, "w.jsonl"))
    _state.session_state(WRITER).set("handoff", {"phase": "writing", "path": str(path)})
    path.write_text("# Handoff\n")  # killed during the write
    offer = _start(project, "resume", WRITER)
    assert offer == {"systemMessage": session_start.offer_text(path, writer=True)}
    job = _state.session_state(WRITER).get("handoff")
    assert (job["phase"], job["automod"]) == ("ready", "offered")  # the mod is not told


@pytest.fixture
def writer_process() -> Iterator[subprocess.Popen[bytes]]:
    """The Claude Code process of the writer, in another terminal: alive until killed."""
    child = subprocess.Popen(["sleep", "120"])
    try:
        yield child
    finally:
        child.kill()
        child.wait()


def _as_process(monkeypatch: pytest.MonkeyPatch, pid: int) -> None:
    monkeypatch.setenv("CLAUDE_PID", str(pid))


def test_a_second_claude_leaves_a_handoff_in_flight_to_its_chain(
    project: Path, monkeypatch: pytest.MonkeyPatch, writer_process: subprocess.Popen[bytes]
) -> None:
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "auto")
    _as_process(monkeypatch, writer_process.pid)
    _start(project, "startup", WRITER)
    # The writer was asked for the file and has written it; no Stop has seen it yet.
    path = handoff.new_handoff_path(project)
    handoff.record_reserved(project, path, _chain.ChainLink("claude", WRITER, "w.jsonl"))
    path.write_text("# Handoff\n## Next step\nrun it\n")

    # A second `claude` in the same project: nothing offered, nothing injected.
    _as_process(monkeypatch, os.getpid())
    assert _start(project, "startup", "second") is None
    assert _start(project, "resume", "second") is None
    assert _start(project, "clear", "second-2") is None  # nor at its /clear
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "manual")
    assert _start(project, "startup", "second-3") is None  # manual: not even offered
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "auto")
    assert handoff.injected_into(project, path.name) == []

    # The writer's /clear takes it; while that fresh session runs it stays its own.
    _as_process(monkeypatch, writer_process.pid)
    assert str(path) in _context(_start(project, "clear", "fresh-1"))
    _as_process(monkeypatch, os.getpid())
    assert _start(project, "startup", "third") is None

    # The writer's process is killed before the fresh session's first request: the next
    # plain start continues from the file (docs/claude-handoff.md, "After a crash").
    writer_process.kill()
    writer_process.wait()
    assert str(path) in _context(_start(project, "startup", "fourth"))


def test_a_written_handoff_is_the_writers_until_its_process_ends(
    project: Path, monkeypatch: pytest.MonkeyPatch, writer_process: subprocess.Popen[bytes]
) -> None:
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "auto")
    _as_process(monkeypatch, writer_process.pid)
    _start(project, "startup", WRITER)
    path = _write(project, "# Handoff\n")  # the writer's Stop saw it: ready, not cleared
    _as_process(monkeypatch, os.getpid())
    assert _start(project, "startup", "second") is None
    writer_process.terminate()  # the user quit the writer's Claude Code
    writer_process.wait()
    assert str(path) in _context(_start(project, "startup", "third"))


def test_a_writer_whose_process_runs_another_session_now_holds_nothing(
    project: Path, monkeypatch: pytest.MonkeyPatch, writer_process: subprocess.Popen[bytes]
) -> None:
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "auto")
    _as_process(monkeypatch, writer_process.pid)
    _start(project, "startup", WRITER)
    path = _write(project, "# Handoff\n")
    # The pid's record names another session now (a recycled pid; or another session
    # resumed in that Claude Code): the writer's session is over.
    _chain.record_process(writer_process.pid, project, _chain.ChainLink("claude", "x", "x"))
    _as_process(monkeypatch, os.getpid())
    assert str(path) in _context(_start(project, "startup", "second"))


def test_the_drivers_fresh_session_is_given_the_file_it_names(
    project: Path, monkeypatch: pytest.MonkeyPatch, writer_process: subprocess.Popen[bytes]
) -> None:
    path = _write(project, "# Handoff\n## Next step\nrun it\n")
    monkeypatch.setenv(handoff.RESUME_ENV, str(project / "elsewhere.md"))
    assert _start(project, "startup", "s1") == {"systemMessage": session_start.offer_text(path)}
    # ctxrelay claude run names the file: injected whatever the mode (manual here).
    monkeypatch.setenv(handoff.RESUME_ENV, str(path))
    _as_process(monkeypatch, writer_process.pid)
    assert str(path) in _context(_start(project, "startup", "fresh-1"))
    # A claude run inside that session inherits the variable: the usual rules, and the
    # handoff is fresh-1's while it runs.
    _as_process(monkeypatch, os.getpid())
    monkeypatch.setenv("CTXRELAY_MAIN_HANDOVER", "auto")
    assert _start(project, "startup", "nested") is None
    assert [x.session_id for x in handoff.injected_into(project, path.name)] == ["fresh-1"]
