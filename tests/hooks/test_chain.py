"""The handoff chain: process records, written/started links, and the chain they make."""

from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path

import pytest

from ctxrelay.hooks import chain as _chain
from ctxrelay.hooks import state as _state
from ctxrelay.hooks.chain import ChainLink


@pytest.fixture(autouse=True)
def _state_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "state"))


def _link(name: str) -> ChainLink:
    return ChainLink("claude", name, f"/t/{name}.jsonl")


def test_record_process_returns_the_session_it_ran_before(tmp_path: Path) -> None:
    pid = os.getpid()  # a live process, so its start time is checked too
    assert (
        _chain.record_process(pid, tmp_path, _chain.ChainLink("claude", "s1", "/t/s1.jsonl"))
        is None
    )
    assert _chain.current("claude", pid) == _link("s1")
    assert _chain.record_process(
        pid, tmp_path, _chain.ChainLink("claude", "s2", "/t/s2.jsonl")
    ) == _link("s1")
    assert _chain.current("claude", pid) == _link("s2")
    # the same session again (a resume in the same process) has no predecessor
    assert (
        _chain.record_process(pid, tmp_path, _chain.ChainLink("claude", "s2", "/t/s2.jsonl"))
        is None
    )


def test_record_process_never_links_across_projects(tmp_path: Path) -> None:
    pid = os.getpid()
    _chain.record_process(pid, tmp_path / "a", _chain.ChainLink("claude", "s1", "/t/s1.jsonl"))
    assert (
        _chain.record_process(pid, tmp_path / "b", _chain.ChainLink("claude", "s2", "/t/s2.jsonl"))
        is None
    )


def test_running_is_the_session_of_a_live_process_only(tmp_path: Path) -> None:
    import subprocess

    child = subprocess.Popen(["sleep", "60"])
    try:
        _chain.record_process(child.pid, tmp_path, _link("s1"))
        assert _chain.running("claude", child.pid) == _link("s1")
        assert _chain.running("codex", child.pid) is None  # another host's processes
        child.kill()
        deadline = time.monotonic() + 10
        while _stat_state(child.pid) not in ("Z", None) and time.monotonic() < deadline:
            time.sleep(0.01)
        # Killed, not yet reaped (a zombie): gone as far as the chain goes.
        assert _chain.running("claude", child.pid) is None
        assert _chain.current("claude", child.pid) == _link("s1")  # what it ran last
    finally:
        child.kill()
        child.wait()
    assert _chain.running("claude", child.pid) is None
    for pid in (0, -1):
        assert _chain.running("claude", pid) is None


def _stat_state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rpartition(")")[2].split()[0]
    except OSError:
        return None


def test_a_recycled_pid_is_not_the_old_process(tmp_path: Path) -> None:
    pid = os.getpid()
    _chain.record_process(pid, tmp_path, _chain.ChainLink("claude", "s1", "/t/s1.jsonl"))
    path = Path(_state.host_dir("claude")) / "processes" / f"{pid}.json"
    _state.update_document(str(path), lambda data: data.update(started_at="1"))
    assert _chain.current("claude", pid) is None
    assert (
        _chain.record_process(pid, tmp_path, _chain.ChainLink("claude", "s2", "/t/s2.jsonl"))
        is None
    )


def test_chain_follows_started_then_written_links_oldest_first(tmp_path: Path) -> None:
    a, b, c = _link("a"), _link("b"), _link("c")
    _chain.record_written(tmp_path, "handoff-1.md", a)
    _chain.record_started(tmp_path, "handoff-1.md", b)
    _chain.record_written(tmp_path, "handoff-2.md", b)
    _chain.record_started(tmp_path, "handoff-2.md", c)
    assert _chain.chain(tmp_path, "c") == [a, b, c]
    assert _chain.chain(tmp_path, "b") == [a, b]
    assert _chain.chain(tmp_path, "a") == [a]
    assert _chain.started_from(tmp_path, "c") == "handoff-2.md"
    assert _chain.written_by(tmp_path, "handoff-1.md") == a
    assert _chain.started_by(tmp_path, "handoff-1.md") == b


def test_a_session_with_no_handoff_is_alone_the_privacy_floor(tmp_path: Path) -> None:
    a, b = _link("a"), _link("b")
    _chain.record_written(tmp_path, "handoff-1.md", a)  # written, never started from
    fresh = _link("fresh")  # a plain /clear or a fresh start
    assert _chain.chain(tmp_path, fresh) == [fresh]
    assert _chain.chain(tmp_path, "fresh") == []
    assert _chain.chain(tmp_path, b) == [b]
    assert _chain.chain(tmp_path / "other", "a") == []  # never another project


def test_links_are_bounded_and_a_cycle_ends(tmp_path: Path) -> None:
    for n in range(_chain.KEEP + 5):
        _chain.record_written(tmp_path, f"handoff-{n}.md", _link(f"s{n}"))
    links = _state.project_state(tmp_path).get("written")
    assert len(links) == _chain.KEEP
    assert "handoff-0.md" not in links
    a, b = _link("x"), _link("y")
    _chain.record_written(tmp_path, "h-x.md", a)
    _chain.record_started(tmp_path, "h-x.md", b)
    _chain.record_written(tmp_path, "h-y.md", b)
    _chain.record_started(tmp_path, "h-y.md", a)  # a corrupt document cannot loop
    assert _chain.chain(tmp_path, "y") == [a, b]


def _write_many(state: str, project: str, start: int) -> None:
    os.environ["CTXRELAY_STATE_DIR"] = state
    for n in range(start, start + 20):
        _chain.record_written(project, f"handoff-{n}.md", ChainLink("claude", f"s{n}", "t"))


def test_concurrent_writers_lose_no_link(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    state = os.environ["CTXRELAY_STATE_DIR"]
    procs = [ctx.Process(target=_write_many, args=(state, str(tmp_path), k * 20)) for k in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0
    assert len(_state.project_state(tmp_path).get("written")) == 60


def test_garbage_documents_read_as_no_links(tmp_path: Path) -> None:
    doc = _state.project_state(tmp_path)
    doc.set("written", {"h.md": {"session_id": 3}, "g.md": "x"})
    doc.set("started", ["not", "a", "dict"])
    assert _chain.chain(tmp_path, "3") == []
    assert _chain.written_by(tmp_path, "h.md") is None
    _chain.record_started(tmp_path, "h.md", _link("b"))
    assert _chain.started_by(tmp_path, "h.md") == _link("b")
