"""Runtime benchmark: per-dispatch overhead of the loop (policy + store), scripted model.

A session of DISPATCHES model responses, each calling one no-op tool, runs on a fresh
SQLite store in a temporary directory. The overhead of a dispatch is the time from the
moment the model's answer returns to the moment the next request reaches the model:
recording the response (one batch), running the tool and recording its result, then
assembling the next request, estimating it, reading the window's claims and asking the
policy. The model's own time is excluded (the scripted model answers at once).

The baseline, measured in the same run on the same file system: one bare one-row
INSERT transaction through ``sqlite3`` in WAL mode, the least a durable dispatch costs.
The target (``docs/runtime.md``) is a median of at most 2 ms on SQLite.

    python bench/runtime.py            # a table
    python bench/runtime.py --json     # one JSON object
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from ctxrelay.budget import Budget
from ctxrelay.runtime import Runtime, SessionConfig
from ctxrelay.runtime.model import ModelRequest, ModelResponse
from ctxrelay.runtime.providers.scripted import ScriptedProvider, load_steps
from ctxrelay.runtime.tools import ToolContext, ToolResult, builtin_tools
from ctxrelay.store import open_store

TARGET_MEDIAN_MS = 2.0


class Noop:
    name = "noop"
    description = "does nothing"
    replay_safe = True
    input_schema: Mapping[str, Any] = {"type": "object", "properties": {}}

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult("ok")


class Timed(ScriptedProvider):
    """The scripted model, stamping when each request arrives and each answer leaves."""

    def __init__(self, steps: list[dict[str, Any]]) -> None:
        super().__init__(load_steps(steps), name="scripted:bench")
        self.gaps: list[float] = []
        self._left: float | None = None

    async def complete(
        self, request: ModelRequest, *, on_text: Callable[[str], None] | None = None
    ) -> ModelResponse:
        arrived = time.perf_counter()
        if self._left is not None:
            self.gaps.append(arrived - self._left)
        response = await super().complete(request, on_text=on_text)
        self._left = time.perf_counter()
        return response


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return {
        "median_ms": statistics.median(ordered) * 1e3,
        "p99_ms": p99 * 1e3,
        "mean_ms": statistics.fmean(ordered) * 1e3,
    }


def measure_runtime(root: Path, dispatches: int) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [
        {"text": f"step {i}", "tool_calls": [{"name": "noop", "input": {}}], "input_tokens": 2_000}
        for i in range(dispatches)
    ]
    steps.append({"text": "done", "input_tokens": 2_000})
    (root / "ws").mkdir()
    store = open_store(root / "bench.db")
    try:
        provider = Timed(steps)
        tools = builtin_tools()
        tools.add(Noop())
        runtime = Runtime(store, provider, tools=tools)
        # A window large enough that no rollover interrupts the series.
        config = SessionConfig(
            budget=Budget(limit=1_000_000, output_reserve=32_000, threshold=60),
            workspace=root / "ws",
        )
        result = asyncio.run(runtime.start("benchmark", config).run())
        assert result.status == "done", result
    finally:
        store.close()
    gaps = provider.gaps
    late = gaps[-min(100, len(gaps)) :]
    return {
        "dispatches": len(gaps),
        **_percentiles(gaps),
        "last_100": _percentiles(late),
    }


def measure_baseline(root: Path, n: int) -> dict[str, float]:
    conn = sqlite3.connect(root / "baseline.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, kind TEXT, text TEXT, meta TEXT)")
    samples = []
    for i in range(n):
        start = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "INSERT INTO rows (kind, text, meta) VALUES (?, ?, ?)", ("assistant", f"s{i}", "{}")
        )
        conn.execute("COMMIT")
        samples.append(time.perf_counter() - start)
    conn.close()
    return _percentiles(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--dispatches", type=int, default=500, help="model responses (500)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ctxrelay-bench-") as tmp:
        root = Path(tmp)
        baseline = measure_baseline(root, args.dispatches)
        runtime = measure_runtime(root, args.dispatches)
    report = {
        "backend": "sqlite",
        "runtime": runtime,
        "baseline_bare_insert": baseline,
        "ratio_median": runtime["median_ms"] / baseline["median_ms"],
        "target_median_ms": TARGET_MEDIAN_MS,
        "meets_target": runtime["median_ms"] <= TARGET_MEDIAN_MS,
    }
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"per-dispatch overhead, SQLite, {runtime['dispatches']} dispatches (scripted model)")
    print(
        f"  runtime           median {runtime['median_ms']:.3f} ms   p99 {runtime['p99_ms']:.3f} ms"
    )
    late = runtime["last_100"]
    print(
        f"  last 100 (long window) median {late['median_ms']:.3f} ms   p99 {late['p99_ms']:.3f} ms"
    )
    bare = baseline
    print(f"  bare insert+commit median {bare['median_ms']:.3f} ms   p99 {bare['p99_ms']:.3f} ms")
    print(f"  ratio (median)    {report['ratio_median']:.1f}x the bare insert")
    verdict = "meets" if report["meets_target"] else "MISSES"
    print(f"  target: median <= {TARGET_MEDIAN_MS} ms: {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
