"""Kill -9 at any point and resume (``docs/contracts.md``), on SQLite.

Each trial runs a scripted session in a forked child and kills it with SIGKILL, either
at a chosen store write (just before or just after it commits: between claim and
dispatch, mid-batch, mid-rollover) or after a random delay (mid-request, mid-tool).
The session is then resumed in fresh children (sometimes killed again) until it is done,
and compared with an uninterrupted run of the same script:

- no duplicated advisory (the same (window, stage) advisories, each once);
- no lost row (every row committed before a kill is still there, unchanged, and the
  final history equals the uninterrupted one);
- every window's seal reason as in the uninterrupted run;
- never a request over the usable limit, asserted on what the scripted model received
  (its own count of each request, and the loop's estimate).

Forked children keep each trial cheap (no interpreter start-up); the script counts its
own tokens (no ``input_tokens``), so "what the model received" is measured, not stated.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# Imported here, before any fork, so that each child starts warm.
import ctxrelay.store.sqlite  # noqa: F401
from ctxrelay.budget import Budget
from ctxrelay.runtime import Runtime, SessionConfig
from ctxrelay.runtime.providers.scripted import ScriptedProvider, load_steps
from ctxrelay.store import Row, Store, open_store

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

TRIALS = int(os.environ.get("CTXRELAY_FAULT_TRIALS", "200"))
SEED = int(os.environ.get("CTXRELAY_FAULT_SEED", "20261130"))
SESSION = "fault-trial-session"
BUDGET = Budget(limit=5_000, output_reserve=1_000, threshold=50)
"""usable 4,000 · handoff target 2,500 · warning 2,000."""

_WRITES = ("append", "append_advisory", "rollover", "update_session", "create_session")


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "input": args}


def _steps() -> list[dict[str, Any]]:
    notes = "# notes\ngoal: read the files\ndone: f1-f4\nnext: f5\n"
    return [
        # window 1: warning, handoff request, checkpoint, new_context with a sibling
        {"text": "f1", "tool_calls": [_call("read_file", path="f1.txt")]},
        {"text": "f2", "tool_calls": [_call("read_file", path="f2.txt")]},
        {"text": "f3", "tool_calls": [_call("read_file", path="f3.txt")]},
        {
            "text": "notes and f4",
            "tool_calls": [
                _call("write_file", path="context-notes.md", content=notes),
                _call("read_file", path="f4.txt"),
            ],
        },
        {"text": "f5", "tool_calls": [_call("read_file", path="f5.txt")]},
        {
            "text": "checkpoint",
            "tool_calls": [
                _call("write_file", path="context-notes.md", content=notes + "handoff now\n")
            ],
        },
        {
            "text": "hand off",
            "tool_calls": [_call("new_context"), _call("write_file", path="x.txt", content="x")],
        },
        # window 2: history, then reads past the target and into a forced rollover
        {
            "text": "history",
            "tool_calls": [_call("session_history", action="search", query="goal")],
        },
        {"text": "g1", "tool_calls": [_call("read_file", path="f1.txt")]},
        {"text": "g2", "tool_calls": [_call("read_file", path="f2.txt")]},
        {
            "text": "g3",
            "tool_calls": [_call("read_file", path="f3.txt"), _call("read_file", path="f4.txt")],
        },
        {"text": "g5", "tool_calls": [_call("read_file", path="f5.txt")]},
        {"text": "g6", "tool_calls": [_call("read_file", path="f6.txt")]},
        # window 3
        {"text": "finish", "tool_calls": [_call("write_file", path="done.txt", content="ok")]},
        {"text": "finished"},
    ]


def _workspace(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    for i in range(1, 7):
        line = f"file {i}: " + "lorem ipsum dolor sit amet " * 3 + "\n"
        (path / f"f{i}.txt").write_text(line * 20)


@dataclass
class Trial:
    root: Path

    @property
    def db(self) -> Path:
        return self.root / "s.db"

    @property
    def ws(self) -> Path:
        return self.root / "ws"

    @property
    def log(self) -> Path:
        return self.root / "received.jsonl"


def _instrument(store: Store, kill_at: int | None, before: bool) -> None:
    """SIGKILL this process at the ``kill_at``-th store write, before or after it."""
    count = 0
    for name in _WRITES:
        original = getattr(store, name)

        def wrapper(*args: Any, _original: Callable[..., Any] = original, **kw: Any) -> Any:
            nonlocal count
            count += 1
            if count == kill_at and before:
                os.kill(os.getpid(), signal.SIGKILL)
            out = _original(*args, **kw)
            if count == kill_at and not before:
                os.kill(os.getpid(), signal.SIGKILL)
            return out

        setattr(store, name, wrapper)
    store.writes = lambda: count  # type: ignore[attr-defined]


def _session_body(trial: Trial, kill_at: int | None, before: bool, count_file: Path | None) -> None:
    store = open_store(trial.db)
    _instrument(store, kill_at, before)
    provider = ScriptedProvider(load_steps(_steps()), name="scripted:faults", log=trial.log)
    runtime = Runtime(store, provider)
    try:
        store.get_session(SESSION)
        session = runtime.open(SESSION)
    except Exception:
        config = SessionConfig(budget=BUDGET, workspace=trial.ws)
        session = runtime.start("read the files", config, session_id=SESSION)
    result = asyncio.run(session.run())
    if count_file is not None:
        count_file.write_text(str(store.writes()))  # type: ignore[attr-defined]
    store.close()
    if result.status != "done":
        raise SystemExit(f"ended {result.status} ({result.reason})")


def _fork(
    trial: Trial,
    *,
    kill_at: int | None = None,
    before: bool = False,
    kill_after_s: float | None = None,
    count_file: Path | None = None,
) -> int:
    """Run the session in a child; return its wait status (killed or exit code)."""
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        code = 0
        try:
            _session_body(trial, kill_at, before, count_file)
        except BaseException:
            code = 3
        os._exit(code)
    if kill_after_s is not None:
        deadline = time.monotonic() + kill_after_s
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
            time.sleep(0.0005)
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return status


def _snapshot(trial: Trial) -> list[Row]:
    if not trial.db.exists():
        return []
    store = open_store(trial.db)
    try:
        try:
            return store.rows(SESSION)
        except Exception:
            return []
    finally:
        store.close()


@dataclass(frozen=True)
class Outcome:
    status: str
    seals: list[str | None]
    advisories: list[tuple[int, str]]
    history: list[tuple[int, str, str | None]]
    rows: list[Row]


def _outcome(trial: Trial) -> Outcome:
    store = open_store(trial.db)
    try:
        windows = store.windows(SESSION)
        index = {w.id: w.index for w in windows}
        rows = store.rows(SESSION)
        return Outcome(
            status=store.get_session(SESSION).status,
            seals=[w.seal_reason for w in windows],
            advisories=[
                (index[r.window_id], str(r.metadata["stage"])) for r in rows if r.kind == "warning"
            ],
            history=[(index[r.window_id], r.kind, r.text) for r in rows],
            rows=rows,
        )
    finally:
        store.close()


def _received(trial: Trial) -> list[dict[str, Any]]:
    return [json.loads(line) for line in trial.log.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Outcome, int, float]:
    trial = Trial(tmp_path_factory.mktemp("baseline"))
    _workspace(trial.ws)
    count = trial.root / "writes"
    started = time.monotonic()
    status = _fork(trial, count_file=count)
    took = time.monotonic() - started
    assert os.WIFEXITED(status)
    assert os.WEXITSTATUS(status) == 0
    return _outcome(trial), int(count.read_text()), took


def test_the_uninterrupted_run_covers_every_path(baseline: tuple[Outcome, int, float]) -> None:
    outcome, writes, _ = baseline
    assert outcome.status == "done"
    assert outcome.seals == ["new_context", "forced", None]
    assert outcome.advisories == [(1, "warning"), (1, "handoff"), (2, "warning"), (2, "handoff")]
    assert writes > 40


def _check(trial: Trial, base: Outcome, snapshots: list[list[Row]]) -> None:
    got = _outcome(trial)
    assert got.status == "done"
    assert got.seals == base.seals
    assert got.advisories == base.advisories
    assert got.history == base.history
    final = {r.id: r for r in got.rows}
    for snap in snapshots:
        for row in snap:
            kept = final.get(row.id)
            assert kept is not None, f"row {row.id} ({row.kind}) was lost"
            assert (kept.kind, kept.text, dict(kept.metadata)) == (
                row.kind,
                row.text,
                dict(row.metadata),
            )
    for entry in _received(trial):
        assert entry["counted_tokens"] <= entry["usable_limit"], entry
        assert entry["estimated_tokens"] <= entry["usable_limit"], entry
        assert entry["loop_bytes"] == entry["bytes"], entry  # incremental render is exact


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    """Trial directories on a memory file system when there is one: a SIGKILL loses
    nothing the kernel has (fsync matters only for power loss), and it makes each of
    the many commits cheap."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        root = Path(tempfile.mkdtemp(prefix="ctxrelay-faults-", dir=shm))
        try:
            yield root
        finally:
            shutil.rmtree(root, ignore_errors=True)
    else:
        yield tmp_path


def test_sigkill_anywhere_then_resume(
    baseline: tuple[Outcome, int, float], scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tmp_path = scratch
    base, writes, took = baseline
    rng = random.Random(SEED)
    template = tmp_path / "template"
    _workspace(template)
    kills = 0
    for n in range(TRIALS):
        trial = Trial(tmp_path / f"t{n}")
        shutil.copytree(template, trial.ws)
        snapshots: list[list[Row]] = []
        # First attempt: killed at a store write (before/after its commit), or at a
        # random moment.
        if n % 3 == 2:
            status = _fork(trial, kill_after_s=rng.uniform(0.0, took))
        else:
            status = _fork(trial, kill_at=rng.randint(1, writes), before=bool(n % 2))
        kills += int(os.WIFSIGNALED(status))
        snapshots.append(_snapshot(trial))
        # Sometimes the resumed run is killed too.
        if rng.random() < 0.3:
            status = _fork(trial, kill_at=rng.randint(1, writes // 2), before=rng.random() < 0.5)
            kills += int(os.WIFSIGNALED(status))
            snapshots.append(_snapshot(trial))
        for _ in range(5):  # resume until done (a killed-at-the-end run is already done)
            status = _fork(trial)
            if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
                break
        else:
            pytest.fail(f"trial {n}: the session never finished")
        _check(trial, base, snapshots)
        shutil.rmtree(trial.root)
    # Most trials must really have been killed (a kill point past the end is allowed).
    assert kills >= TRIALS * 0.8, (kills, TRIALS)
    with capsys.disabled():
        print(f"\nfault injection: {TRIALS} trials, {kills} SIGKILLs, all resumed intact")
