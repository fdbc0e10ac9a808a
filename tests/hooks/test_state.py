"""The hooks' durable state: atomic, locked, concurrent-safe, fail-open on bad files."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import pytest

from ctxrelay.claude._state import record_window, recorded_window
from ctxrelay.hooks import state as _state
from ctxrelay.hooks.state import (
    StateFile,
    StateLockError,
    host_dir,
    project_state,
    session_state,
    shared_state,
    state_root,
)


@pytest.fixture
def root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path))
    return tmp_path


def test_state_root_prefers_explicit_then_xdg(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "explicit"))
    assert state_root() == str(tmp_path / "explicit")
    assert host_dir("codex") == str(tmp_path / "explicit" / "codex")
    monkeypatch.delenv("CTXRELAY_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_root() == str(tmp_path / "xdg" / "ctxrelay")
    # The Claude Code host's folder is where the previous layout kept its state.
    assert host_dir("claude") == str(tmp_path / "xdg" / "ctxrelay" / "claude")
    monkeypatch.setenv("XDG_STATE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert state_root() == str(tmp_path / "home" / ".local" / "state" / "ctxrelay")


def test_missing_and_corrupt_documents_read_empty_and_are_rewritten(tmp_path: Path) -> None:
    doc = StateFile(tmp_path / "d.json")
    assert doc.read() == {}
    doc.path.write_text("{not json")
    assert doc.read() == {}
    doc.set("k", 1)
    assert json.loads(doc.path.read_text()) == {"k": 1}
    doc.path.write_text("[1, 2]")  # valid JSON, wrong shape
    assert doc.read() == {}


def test_update_returns_the_result_and_leaves_no_temp_files(tmp_path: Path) -> None:
    doc = StateFile(tmp_path / "sub" / "d.json")

    def change(data: dict[str, object]) -> str:
        data["a"] = [1, 2]
        return "ok"

    assert doc.update(change) == "ok"
    assert doc.get("a") == [1, 2]
    assert sorted(p.name for p in doc.path.parent.iterdir()) == ["d.json", "d.lock"]


def test_update_that_changes_nothing_does_not_write(tmp_path: Path) -> None:
    doc = StateFile(tmp_path / "d.json")
    doc.set("a", 1)
    stamp = doc.path.stat().st_mtime_ns
    os.utime(doc.path, ns=(stamp - 10_000_000_000, stamp - 10_000_000_000))
    doc.update(lambda data: data.get("a"))
    assert doc.path.stat().st_mtime_ns == stamp - 10_000_000_000


def test_a_failing_change_keeps_the_old_document(tmp_path: Path) -> None:
    doc = StateFile(tmp_path / "d.json")
    doc.set("a", 1)

    def boom(data: dict[str, object]) -> None:
        data["a"] = 2
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        doc.update(boom)
    assert doc.read() == {"a": 1}


def test_claim_once_and_reset(tmp_path: Path) -> None:
    doc = StateFile(tmp_path / "d.json")
    assert doc.claim_once("context")
    assert not doc.claim_once("context")
    assert doc.claim_once("task_done")
    assert doc.claimed("context")
    doc.reset("once")
    assert not doc.claimed("context")
    assert doc.claim_once("context")


def test_a_claim_inside_an_update_is_claim_once(tmp_path: Path) -> None:
    """The Stop hook claims its hints inside its own update (one lock for the whole
    decision): the same flags, in the same group, as claim_once."""
    doc = StateFile(tmp_path / "d.json")
    assert doc.update(lambda data: _state.claim(data, "auto:context"))
    assert not doc.claim_once("auto:context")
    assert doc.claimed("auto:context", group=_state.ONCE)
    assert not doc.update(lambda data: _state.claim(data, "auto:context"))
    assert doc.update(lambda data: _state.claim(data, "auto:context", group="other"))
    doc.reset(_state.ONCE)
    assert doc.update(lambda data: _state.claim(data, "auto:context"))


def test_append_take_delivers_each_item_once_and_caps(tmp_path: Path) -> None:
    doc = StateFile(tmp_path / "d.json")
    for i in range(5):
        doc.append("notices", {"i": i}, max_items=3)
    assert doc.take("notices") == [{"i": 2}, {"i": 3}, {"i": 4}]
    assert doc.take("notices") == []


def test_untrusted_ids_never_escape_the_state_dir(root: Path) -> None:
    for bad in ("../../etc/passwd", "/abs", "", ".hidden", "a/b", "x" * 500, "é"):
        path = session_state("claude", bad).path
        assert path.parent == root / "claude" / "sessions"
        assert path.name.startswith("h-")
    good = "505a7478-0c09-4225-8c2e-eb227889cf62"
    assert session_state("codex", good).path.name == f"{good}.json"
    assert shared_state("claude", "../x").path.parent == root / "claude"
    assert Path(host_dir("../x")).parent == root


def test_project_state_lives_beside_the_handoff_files(root: Path) -> None:
    """The records go where the files go: the project's ``.ctxrelay/handoff/``, the same
    through a symlink, created with the umask's mode and no lock file beside them."""
    (root / "p").mkdir()
    (root / "link").symlink_to(root / "p")
    assert project_state(root / "p").path == project_state(root / "link").path
    doc = project_state(root / "p")
    assert doc.path == root / "p" / ".ctxrelay" / "handoff" / "chain.json"
    old = os.umask(0o022)
    try:
        doc.set("consumed", ["handoff-1.md"])
    finally:
        os.umask(old)
    assert doc.path.stat().st_mode & 0o777 == 0o644  # readable as the files are
    assert sorted(p.name for p in doc.path.parent.iterdir()) == ["chain.json"]
    assert project_state(root / "link").get("consumed") == ["handoff-1.md"]


def test_a_persons_records_of_the_previous_layouts_are_merged_once(root: Path) -> None:
    """The previous versions kept a project's handoff records in the user's state
    directory; the first read folds them into the project's document, marks the
    handoffs they reserved or saw written as this person's, and removes them."""
    project = root / "p"
    _state.project_state(project).set("consumed", ["handoff-2.md"])  # a teammate's
    key = _state.project_key(project)
    for old, name in (
        (root / "claude" / "projects" / f"{key}.json", "handoff-1.md"),
        (root / "projects" / f"{key}.json", "handoff-3.md"),
    ):
        old.parent.mkdir(parents=True)
        old.write_text(json.dumps({"consumed": [name], "reserved": [name]}))
    doc = project_state(project)
    assert sorted(doc.get("consumed")) == ["handoff-1.md", "handoff-2.md", "handoff-3.md"]
    assert doc.get("owners") == {
        "handoff-1.md": _state.owner(),
        "handoff-3.md": _state.owner(),
    }
    assert not list((root / "projects").iterdir())
    assert not list((root / "claude" / "projects").iterdir())


def test_the_owner_id_is_made_once_per_state_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "a"))
    first = _state.owner()
    assert len(first) == 16
    assert _state.owner() == first
    monkeypatch.setenv("CTXRELAY_STATE_DIR", str(tmp_path / "b"))
    assert _state.owner() != first  # another HOME is another person


def test_window_recorded_per_session_then_per_model(root: Path) -> None:
    assert recorded_window("s1", "m") is None
    record_window("s1", "claude-x[1m]", 1_000_000)
    assert recorded_window("s1", None) == 1_000_000
    # A fresh session of the same model, before its first statusline run.
    assert recorded_window("s2", "claude-x[1m]") == 1_000_000
    assert recorded_window("s2", "other") is None
    record_window("s1", "claude-x[1m]", 0)  # ignored
    assert recorded_window("s1", None) == 1_000_000


def test_lock_timeout_raises_instead_of_hanging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    doc = StateFile(tmp_path / "d.json")
    doc.set("a", 1)
    monkeypatch.setattr(_state, "LOCK_TIMEOUT_S", 0.05)
    fd = os.open(doc.path.with_suffix(".lock"), os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        # flock locks belong to the open file description: a second open conflicts.
        with pytest.raises(StateLockError):
            doc.set("a", 2)
    finally:
        os.close(fd)
    assert doc.get("a") == 1


def _race_claim(path: str, queue: multiprocessing.Queue[bool]) -> None:
    queue.put(StateFile(Path(path)).claim_once("context"))


def _race_append(path: str, n: int) -> None:
    doc = StateFile(Path(path))
    for i in range(n):
        doc.append("items", f"{os.getpid()}-{i}", max_items=10_000)


def test_concurrent_processes_claim_exactly_once(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    queue: multiprocessing.Queue[bool] = ctx.Queue()
    path = str(tmp_path / "race.json")
    procs = [ctx.Process(target=_race_claim, args=(path, queue)) for _ in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    results = [queue.get(timeout=10) for _ in procs]
    assert results.count(True) == 1
    assert results.count(False) == 7


def test_concurrent_appends_lose_nothing(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    path = str(tmp_path / "race.json")
    procs = [ctx.Process(target=_race_append, args=(path, 25)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    items = StateFile(Path(path)).take("items")
    assert len(items) == 100
    assert len(set(items)) == 100
