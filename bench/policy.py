"""Benchmark the policy core: evaluations per second and simulate throughput.

Each figure is reported against a baseline measured in the same run, because the machine
is shared and absolute numbers drift: a bare Python function that does the same integer
comparisons as a dispatch-time evaluation, with no validation, no objects and no enums.
The ratio (policy / baseline) is the figure to compare across machines.

    python bench/policy.py            # a readable summary
    python bench/policy.py --json     # one JSON object
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable

from ctxrelay.budget import Budget, Stage, evaluate, simulate

LIMIT = 200_000
RESERVE = 32_000
THRESHOLD = 60


def _trajectory(n: int, seed: int = 7) -> list[int]:
    """Request sizes of sessions that grow, hand off at random points and start again."""
    rng = random.Random(seed)
    sizes: list[int] = []
    tokens = 5_000
    for _ in range(n):
        tokens += rng.randint(500, 6_000)
        if tokens > LIMIT - RESERVE + 2_000 or rng.random() < 0.01:
            tokens = rng.randint(3_000, 12_000)
        sizes.append(tokens)
    return sizes


def _baseline_eval(
    tokens: int, advisory: int, claimed: frozenset[str], points: tuple[int, int, int]
) -> str:
    """The arithmetic of one evaluation, as bare as Python allows."""
    usable, target, warn_at = points
    if tokens > usable:
        return "rollover"
    headroom = tokens + advisory <= usable
    if tokens >= target:
        if "handoff" in claimed or not headroom:
            return "continue"
        return "warn"
    if tokens >= warn_at and not claimed and headroom:
        return "warn"
    return "continue"


def _best_rate(run: Callable[[], int], repeats: int) -> float:
    """Operations per second of the fastest of ``repeats`` runs (least disturbed)."""
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        ops = run()
        rates.append(ops / (time.perf_counter() - start))
    return max(rates)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print only JSON")
    parser.add_argument("-n", type=int, default=200_000, help="dispatches per run")
    parser.add_argument("--repeats", type=int, default=5, help="runs per figure (best counts)")
    args = parser.parse_args(argv)

    budget = Budget(limit=LIMIT, output_reserve=RESERVE, threshold=THRESHOLD)
    usable = budget.usable_limit
    target = budget.handoff_target
    warn_at = budget.warning_at
    assert target is not None
    assert warn_at is not None
    points = (usable, target, warn_at)
    sizes = _trajectory(args.n)
    # Rotate the claim sets a host sees so every branch of the rules runs.
    claim_sets: list[frozenset[Stage]] = [
        frozenset(),
        frozenset({Stage.WARNING}),
        frozenset({Stage.HANDOFF}),
        frozenset({Stage.WARNING, Stage.HANDOFF}),
    ]
    plain_sets = [frozenset(s.value for s in c) for c in claim_sets]
    work = [(n, claim_sets[i % 4], plain_sets[i % 4]) for i, n in enumerate(sizes)]

    def policy_loop() -> int:
        for n, claimed, _ in work:
            evaluate(budget, n, advisory_tokens=250, claimed=claimed)
        return len(work)

    def baseline_loop() -> int:
        for n, _, plain in work:
            _baseline_eval(n, 250, plain, points)
        return len(work)

    def simulate_run() -> int:
        simulate(budget, sizes, advisory_tokens=250)
        return len(sizes)

    # Interleave the measurements so that load from other processes hits both alike.
    policy, baseline, sim = [], [], []
    for _ in range(args.repeats):
        baseline.append(_best_rate(baseline_loop, 1))
        policy.append(_best_rate(policy_loop, 1))
        sim.append(_best_rate(simulate_run, 1))
    result = {
        "dispatches_per_run": args.n,
        "repeats": args.repeats,
        "evaluations_per_s": round(max(policy)),
        "simulate_dispatches_per_s": round(max(sim)),
        "baseline_calls_per_s": round(max(baseline)),
        "evaluate_vs_baseline": round(max(policy) / max(baseline), 3),
        "simulate_vs_baseline": round(max(sim) / max(baseline), 3),
        "evaluate_median_us": round(1e6 / statistics.median(policy), 3),
        "python": sys.version.split()[0],
    }
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"policy evaluate : {result['evaluations_per_s']:>12,} evaluations/s")
    print(f"policy simulate : {result['simulate_dispatches_per_s']:>12,} dispatches/s")
    print(f"baseline (bare) : {result['baseline_calls_per_s']:>12,} calls/s")
    print(
        f"ratio to baseline: evaluate {result['evaluate_vs_baseline']:.3f}, "
        f"simulate {result['simulate_vs_baseline']:.3f} (1.0 = as fast as bare arithmetic)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
