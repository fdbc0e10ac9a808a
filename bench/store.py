"""Store benchmark: append latency (median, p99) and racing claims per second, SQLite and
PostgreSQL side by side.

Each backend's figures come with a baseline measured in the same run on the same database
server: a bare one-row INSERT transaction through the same driver, so the ratio shows what
the store adds (sequence bump, window check, JSON, the row object). PostgreSQL runs on a
throwaway cluster started like the tests start it (durable settings: fsync on); without
server binaries or psycopg its column says why it was skipped.

    python bench/store.py            # a table
    python bench/store.py --json     # one JSON object
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import queue
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ctxrelay.store import NewRow, open_store
from ctxrelay.testing import ThrowawayPostgres, find_server_binaries

RACERS = {"sqlite": 8, "postgresql": 32}
STAGES = ("warning", "handoff")


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return {"median_ms": statistics.median(ordered) * 1e3, "p99_ms": p99 * 1e3}


def _time(calls: int, call: Callable[[int], object]) -> list[float]:
    out = []
    for i in range(calls):
        start = time.perf_counter()
        call(i)
        out.append(time.perf_counter() - start)
    return out


def _store_latency(target: str, calls: int) -> dict[str, Any]:
    store = open_store(target)
    try:
        session = store.create_session()
        window = store.current_window(session.id).id
        text = "tool output " * 40  # ~500 bytes, a typical row
        one = _time(
            calls,
            lambda i: store.append(
                session.id, window, [NewRow("assistant", text, {"tokens": i, "model": "m"})]
            ),
        )
        three = _time(
            calls // 4,
            lambda i: store.append(
                session.id,
                window,
                [NewRow("tool_call", text), NewRow("tool_result", text), NewRow("user", text)],
            ),
        )
        sessions = [store.create_session() for _ in range(calls // 4)]
        windows = [store.current_window(s.id).id for s in sessions]
        advisory = _time(
            len(sessions),
            lambda i: store.append_advisory(
                sessions[i].id, windows[i], "warning", NewRow("warning", text, {"stage": "w"})
            ),
        )
    finally:
        store.close()
    return {
        "append_1": _percentiles(one),
        "append_3": _percentiles(three),
        "append_advisory": _percentiles(advisory),
    }


def _sqlite_baseline(path: Path, calls: int) -> dict[str, float]:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")
    text = "tool output " * 40

    def insert(_: int) -> None:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO t (body) VALUES (?)", (text,))
        conn.execute("COMMIT")

    samples = _time(calls, insert)
    conn.close()
    return _percentiles(samples)


def _pg_baseline(url: str, calls: int) -> dict[str, float]:
    import psycopg

    text = ("tool output " * 40).encode()
    with psycopg.connect(url, autocommit=True, prepare_threshold=0) as conn:
        conn.execute("CREATE TABLE bench_t (id bigserial PRIMARY KEY, body bytea)")

        def insert(_: int) -> None:
            with conn.transaction():
                conn.execute("INSERT INTO bench_t (body) VALUES (%s)", (text,))

        return _percentiles(_time(calls, insert))


def _racer(
    target: str, windows: list[tuple[str, str]], shuffle: bool, barrier: Any, out: Any
) -> None:
    store = open_store(target)
    if shuffle:  # each worker its own order: contention only where they happen to meet
        random.Random(os.getpid()).shuffle(windows)
    won = 0
    barrier.wait()
    start = time.perf_counter()
    for session_id, window_id in windows:
        for stage in STAGES:
            if store.append_advisory(session_id, window_id, stage, NewRow("warning", stage)):
                won += 1
    out.put((won, start, time.perf_counter()))
    store.close()


def _claims(target: str, racers: int, windows_n: int, shuffle: bool) -> dict[str, Any]:
    store = open_store(target)
    sessions = [store.create_session() for _ in range(windows_n)]
    windows = [(s.id, store.current_window(s.id).id) for s in sessions]
    store.close()
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(racers), ctx.Queue()
    procs = [
        ctx.Process(target=_racer, args=(target, windows, shuffle, barrier, out))
        for _ in range(racers)
    ]
    for p in procs:
        p.start()
    results: list[tuple[int, float, float]] = []
    while len(results) < racers:
        try:
            results.append(out.get(timeout=1))
        except queue.Empty:
            if any(p.exitcode not in (None, 0) for p in procs):
                for p in procs:
                    p.kill()
                raise RuntimeError("a racing process failed (see its traceback above)") from None
    for p in procs:
        p.join()
    won = sum(r[0] for r in results)
    elapsed = max(r[2] for r in results) - min(r[1] for r in results)
    attempts = racers * windows_n * len(STAGES)
    assert won == windows_n * len(STAGES), f"{won} claims won, expected one per (window, stage)"
    return {
        "processes": racers,
        "claims": won,
        "attempts": attempts,
        "seconds": elapsed,
        "claims_per_s": won / elapsed,
        "attempts_per_s": attempts / elapsed,
    }


def _backend(
    name: str, target: str, baseline: dict[str, float], calls: int, windows: int
) -> dict[str, Any]:
    latency = _store_latency(target, calls)
    ratio = latency["append_1"]["median_ms"] / baseline["median_ms"]
    return {
        "backend": name,
        **latency,
        "baseline_insert": baseline,
        "append_1_vs_baseline": ratio,
        # Every worker tries every (window, stage) in the same order: the worst case.
        "race": _claims(target, RACERS[name], windows, shuffle=False),
        # Each worker in its own order: many workers sharing a store.
        "race_shuffled": _claims(target, RACERS[name], windows, shuffle=True),
    }


def run(calls: int, windows: int) -> dict[str, Any]:
    results: dict[str, Any] = {"calls": calls, "load_1m": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory(prefix="ctxrelay-bench-") as tmp:
        base = _sqlite_baseline(Path(tmp) / "baseline.db", calls)
        results["sqlite"] = _backend("sqlite", str(Path(tmp) / "store.db"), base, calls, windows)
    bindir = find_server_binaries()
    try:
        import psycopg  # noqa: F401
    except ImportError:
        bindir = None
        results["postgresql"] = {"skipped": "psycopg is not installed (ctxrelay[postgres])"}
    if bindir is None:
        results.setdefault(
            "postgresql", {"skipped": "PostgreSQL server binaries (initdb, pg_ctl) not found"}
        )
        return results
    server = ThrowawayPostgres(bindir, durable=True).start()
    try:
        url = server.create_database("bench")
        base = _pg_baseline(url, calls)
        results["postgresql"] = _backend("postgresql", url, base, calls, windows)
    finally:
        server.stop()
    return results


def _print_table(results: dict[str, Any]) -> None:
    names = ["sqlite", "postgresql"]
    cols = [results[n] for n in names]
    print(f"ctxrelay store benchmark ({results['calls']} one-row appends per backend)")
    print("(on PostgreSQL every commit is fsynced; on SQLite WAL with synchronous=NORMAL)")
    print(f"{'':34}{'SQLite':>16}{'PostgreSQL':>16}")
    print(f"{'load average (1 min) at start':34}{results['load_1m']:>32.2f}")

    def _ms(key: str, stat: str) -> Callable[[dict[str, Any]], str]:
        return lambda c: f"{c[key][stat]:.3f}"

    def line(label: str, get: Callable[[dict[str, Any]], str]) -> None:
        cells = [("skipped" if "skipped" in c else get(c)) for c in cols]
        print(f"{label:34}" + "".join(f"{cell:>16}" for cell in cells))

    for key, label in (
        ("append_1", "append 1 row"),
        ("append_3", "append 3-row batch"),
        ("append_advisory", "append_advisory"),
        ("baseline_insert", "baseline: bare INSERT txn"),
    ):
        line(f"{label} median ms", _ms(key, "median_ms"))
        line(f"{label} p99 ms", _ms(key, "p99_ms"))
    line("append 1 row / baseline (median)", lambda c: f"{c['append_1_vs_baseline']:.2f}x")
    line("racing processes", lambda c: str(c["race"]["processes"]))
    line("claims/s, all in one order", lambda c: f"{c['race']['claims_per_s']:.0f}")
    line("  attempts/s", lambda c: f"{c['race']['attempts_per_s']:.0f}")
    line("claims/s, each its own order", lambda c: f"{c['race_shuffled']['claims_per_s']:.0f}")
    line("  attempts/s", lambda c: f"{c['race_shuffled']['attempts_per_s']:.0f}")
    for name, col in zip(names, cols, strict=True):
        if "skipped" in col:
            print(f"{name}: skipped: {col['skipped']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="appends timed per backend")
    parser.add_argument("--windows", type=int, default=100, help="windows raced for claims")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if os.name != "posix":
        print("bench/store.py needs fork (POSIX)", file=sys.stderr)
        return 1
    results = run(args.calls, args.windows)
    if args.json:
        print(json.dumps(results))
    else:
        _print_table(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
