"""Processes racing on one store: exactly one claim per (window, stage), one dispatch-lock
holder at a time, and batches that survive SIGKILL whole. Real processes, real databases
(SQLite file, throwaway PostgreSQL), no mocks."""

from __future__ import annotations

import multiprocessing
import os
import random
import select
import signal
import time
from collections import Counter, defaultdict
from typing import Any

import pytest

from ctxrelay.errors import SessionInUseError
from ctxrelay.store import Row, open_store
from tests.store import workers

_CTX = multiprocessing.get_context("fork")

#: Processes racing per backend (``docs/store.md``: 8 on SQLite, 32 on PostgreSQL).
RACERS = {"sqlite": 8, "postgresql": 32}
CRASH_TRIALS = 100


def _backend(target: str) -> str:
    return "postgresql" if target.startswith("postgresql://") else "sqlite"


def _run_all(procs: list[Any], out: Any, timeout: float = 120) -> list[Any]:
    for p in procs:
        p.start()
    results = [out.get(timeout=timeout) for _ in procs]
    for p in procs:
        p.join(timeout)
        assert p.exitcode == 0
    return results


def test_racing_processes_claim_each_stage_once(store_target: str) -> None:
    racers = RACERS[_backend(store_target)]
    store = open_store(store_target)
    sessions = [store.create_session() for _ in range(6)]
    windows = [(s.id, store.current_window(s.id).id) for s in sessions]
    store.close()  # nothing open in the parent while children fork

    barrier = _CTX.Barrier(racers)
    out = _CTX.Queue()
    procs = [
        _CTX.Process(target=workers.claim_racer, args=(store_target, windows, barrier, out))
        for _ in range(racers)
    ]
    results = _run_all(procs, out)

    wins = Counter((w, stage) for _, won in results for (w, stage, _) in won)
    expected = {(w, stage) for _, w in windows for stage in workers.STAGES}
    assert set(wins) == expected
    assert all(count == 1 for count in wins.values()), wins
    assert len({pid for pid, won in results if won}) >= 1

    store = open_store(store_target)
    try:
        for session_id, window_id in windows:
            rows = store.rows(session_id)
            # One advisory row per stage; the losers wrote nothing.
            assert sorted(r.metadata["stage"] for r in rows) == sorted(workers.STAGES)
            assert store.claims(window_id) == set(workers.STAGES)
    finally:
        store.close()


def test_two_workers_never_hold_the_dispatch_lock_together(store_target: str) -> None:
    holders, rounds = 4, 8
    store = open_store(store_target)
    session = store.create_session()
    store.close()
    barrier = _CTX.Barrier(holders)
    out = _CTX.Queue()
    procs = [
        _CTX.Process(
            target=workers.lock_holder, args=(store_target, session.id, rounds, barrier, out)
        )
        for _ in range(holders)
    ]
    results = _run_all(procs, out)

    store = open_store(store_target)
    try:
        rows = store.rows(session.id)
    finally:
        store.close()
    assert len(rows) == 2 * holders * rounds
    # In commit order the rows must pair up: enter(p), exit(p), enter(q), exit(q), ...
    for enter, leave in zip(rows[::2], rows[1::2], strict=True):
        assert (enter.text, leave.text) == ("enter", "exit")
        assert enter.metadata["pid"] == leave.metadata["pid"]
    assert sum(busy for _, busy in results) > 0  # they really contended


def _read_lines(fd: int, deadline: float) -> list[str]:
    data = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError("the crash writer stopped answering")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            return data.decode().split()
        data += chunk


def _wait_ready(fd: int, deadline: float) -> bytes:
    buf = b""
    while b"ready\n" not in buf:
        left = deadline - time.monotonic()
        assert left > 0, "the crash writer did not start"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 4096)
            assert chunk, "the crash writer died before it was ready"
            buf += chunk
    return buf.split(b"ready\n", 1)[1]


def _check_store(target: str, session_id: str, acked: set[int]) -> int:
    """Every batch whole, every acknowledged batch present, every claim with its row.
    Returns the highest batch number present."""
    store = open_store(target)  # reopening recovers whatever the kill left behind
    try:
        rows = store.rows(session_id)
        windows = store.windows(session_id)
        claims = {w.id: store.claims(w.id) for w in windows}
    finally:
        store.close()
    parts: dict[int, list[Row]] = defaultdict(list)
    for row in rows:
        parts[row.metadata["batch"]].append(row)
    for batch, got in parts.items():
        body = sorted(r.metadata["part"] for r in got if r.metadata["part"] >= 0)
        assert body == [0, 1, 2], f"batch {batch} is torn: parts {body}"
        if batch % 2:  # a rollover: boundary sealed one window, lead-in opened the next
            boundary = next(r for r in got if r.metadata["part"] == 0)
            lead = next(r for r in got if r.metadata["part"] == 1)
            assert boundary.window_id != lead.window_id
    assert acked <= set(parts), f"acknowledged batches lost: {sorted(acked - set(parts))}"
    for batch in acked:
        if batch % 2 == 0:  # acknowledged after its advisory committed
            assert any(r.kind == "warning" for r in parts[batch])
    warnings = [r for r in rows if r.kind == "warning"]
    claimed = {w for w, stages in claims.items() if "warning" in stages}
    assert {r.window_id for r in warnings} == claimed  # no claim without its row, nor back
    assert len(warnings) == len(claimed)
    # Exactly one window is open, the newest.
    assert [w.sealed for w in windows] == [True] * (len(windows) - 1) + [False]
    assert [r.seq for r in rows] == sorted(r.seq for r in rows)
    return max(parts, default=0)


@pytest.mark.slow  # ~10 s on SQLite, ~25 s on PostgreSQL on two busy cores
def test_sigkill_mid_batch_loses_nothing_committed(store_target: str) -> None:
    rng = random.Random(20260)
    store = open_store(store_target)
    session = store.create_session()
    store.close()
    acked: set[int] = set()
    last = 0
    unacked_commits = 0
    for _ in range(CRASH_TRIALS):
        read_fd, write_fd = os.pipe()
        proc = _CTX.Process(
            target=workers.crash_writer, args=(store_target, session.id, last, write_fd)
        )
        proc.start()
        os.close(write_fd)
        try:
            early = _wait_ready(read_fd, time.monotonic() + 60)
            time.sleep(rng.uniform(0, 0.02))
            os.kill(proc.pid or 0, signal.SIGKILL)
            proc.join(30)
            assert proc.exitcode == -signal.SIGKILL
            lines = (early.decode() + " ".join(_read_lines(read_fd, time.monotonic() + 30))).split()
        finally:
            os.close(read_fd)
        acked |= {int(n) for n in lines}
        present = _check_store(store_target, session.id, acked)
        unacked_commits += present > max(acked, default=0)
        last = max(present, last)
    assert acked, "the writer never committed a batch"
    # The kills landed at many points: some between a commit and its acknowledgement.
    assert unacked_commits > 0


def test_a_killed_lock_holder_never_wedges_the_session(store_target: str) -> None:
    store = open_store(store_target)
    try:
        session = store.create_session()
        read_fd, write_fd = os.pipe()
        proc = _CTX.Process(target=workers.lock_and_hang, args=(store_target, session.id, write_fd))
        proc.start()
        os.close(write_fd)
        try:
            ready, _, _ = select.select([read_fd], [], [], 60)
            assert ready
            assert os.read(read_fd, 64) == b"locked\n"
        finally:
            os.close(read_fd)
        with (
            pytest.raises(SessionInUseError, match=f"pid {proc.pid} on "),
            store.dispatch_lock(session.id, timeout=0.2),
        ):
            pass
        os.kill(proc.pid or 0, signal.SIGKILL)
        proc.join(30)
        # The holder's pid is gone on this machine: its lease is taken over at once,
        # long before it would lapse.
        held = store.lease(session.id)
        assert held is None
        with store.dispatch_lock(session.id):
            pass
    finally:
        store.close()
