"""Benchmark the Bash guard over all of NL2Bash: commands per second and exceptions.

Every one of the 12,607 real shell commands in the shared ``corpora/nl2bash/all.cm`` is
judged in-process, as the hook judges a Bash call (``deny_reason``: the cheap pre-check,
then the tree-sitter parse and walk when the command names cat/head/tail/sed, then the
Read calls of a denial). Targets (``docs/guard.md``): zero exceptions, at least 5,000 commands/s.

Because the machine is shared and absolute numbers drift, each figure comes with a
baseline measured in the same run: tree-sitter-bash parsing every command and nothing
else. ``walk_every_command`` skips the pre-check (the worst case, every command parsed
and walked); its ratio to the baseline is the guard's own cost over the parser's.

    python bench/guard.py            # a readable summary
    python bench/guard.py --json     # one JSON object
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ctxrelay.claude.guard import bash
from ctxrelay.hooks.guard import prints
from ctxrelay.hooks.guard._shell import _get_parser, scan

TARGET_PER_S = 5_000
PROJECT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CTXRELAY_SHARED_DIR", PROJECT.parent / "shared"))
CORPUS = SHARED / "corpora" / "nl2bash" / "all.cm"


def _best_rate(run: Callable[[], None], count: int, repeats: int) -> float:
    """Commands per second of the fastest of ``repeats`` runs (the least disturbed)."""
    best = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = max(best, count / (time.perf_counter() - start))
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="example: python bench/guard.py --repeats 5 --json",
    )
    parser.add_argument("--json", action="store_true", help="print only JSON")
    parser.add_argument("--repeats", type=int, default=5, help="runs per figure (best counts)")
    args = parser.parse_args(argv)
    if not CORPUS.exists():
        sys.stderr.write(f"guard bench: the NL2Bash corpus is not at {CORPUS}\n")
        return 2
    commands = CORPUS.read_text(encoding="utf-8").splitlines()
    cwd = tempfile.mkdtemp(prefix="ctxrelay-guard-bench-")  # relative paths name nothing

    # One checked pass: every verdict and every exception.
    verdicts = {"deny": 0, "allow": 0, "unparsed": 0}
    exceptions: list[str] = []
    failed: set[str] = set()
    for command in commands:
        try:
            result = prints.classify(command, cwd)
            bash.deny_reason(command, cwd)
        except Exception as exc:  # counted, never fatal: the count is the figure
            exceptions.append(f"{command!r}: {type(exc).__name__}: {exc}")
            failed.add(command)
            continue
        verdicts["unparsed" if result is None else "deny" if result else "allow"] += 1

    ts_parser = _get_parser()
    encoded = [c.encode("utf-8", "surrogatepass") for c in commands]

    def baseline() -> None:
        for source in encoded:
            ts_parser.parse(source)

    # The timed runs skip any command that raised above, so a failure shows in the count,
    # not as a crash halfway through.
    timed = [c for c in commands if c not in failed]

    def guard() -> None:
        for command in timed:
            bash.deny_reason(command, cwd)

    def walk_all() -> None:
        for command in timed:
            scan(command, cwd)

    # Per-command cost of the commands the pre-check lets through (the parse path).
    parsed = [c for c in timed if prints.might_print_file(c)]
    costs: list[float] = []
    for command in parsed:
        start = time.perf_counter()
        bash.deny_reason(command, cwd)
        costs.append((time.perf_counter() - start) * 1e6)
    costs.sort()

    n = len(timed)
    base_rate = _best_rate(baseline, n, args.repeats)
    guard_rate = _best_rate(guard, n, args.repeats)
    walk_rate = _best_rate(walk_all, n, args.repeats)
    report = {
        "commands": len(commands),
        "exceptions": len(exceptions),
        "verdicts": verdicts,
        "parsed_by_precheck": sum(prints.might_print_file(c) for c in commands),
        "guard_commands_per_s": round(guard_rate),
        "walk_every_command_per_s": round(walk_rate),
        "baseline_parse_only_per_s": round(base_rate),
        "guard_vs_baseline": round(guard_rate / base_rate, 2),
        "parsed_median_us": round(costs[len(costs) // 2], 1) if costs else None,
        "parsed_p99_us": round(costs[int(len(costs) * 0.99)], 1) if costs else None,
        "walk_vs_baseline": round(walk_rate / base_rate, 2),
        "target_commands_per_s": TARGET_PER_S,
        "meets_target": guard_rate >= TARGET_PER_S and not exceptions,
    }
    if args.json:
        print(json.dumps(report))
    else:
        print(
            f"NL2Bash commands:        {len(commands):,} ({report['parsed_by_precheck']:,} parsed)"
        )
        print(f"exceptions:              {len(exceptions)}")
        print(
            f"verdicts:                {verdicts['deny']} denied, {verdicts['allow']:,} "
            f"allowed, {verdicts['unparsed']} not parsable (allowed)"
        )
        print(
            f"guard (as the hook):     {guard_rate:,.0f} commands/s "
            f"({report['guard_vs_baseline']}x the parse-only baseline; "
            f"target >= {TARGET_PER_S:,}/s)"
        )
        print(
            f"walk every command:      {walk_rate:,.0f} commands/s "
            f"({report['walk_vs_baseline']}x the baseline)"
        )
        print(f"baseline (parse only):   {base_rate:,.0f} commands/s")
        if costs:
            print(
                f"a parsed command:        median {report['parsed_median_us']} us, "
                f"p99 {report['parsed_p99_us']} us"
            )
        for line in exceptions[:10]:
            print(f"  exception: {line}")
    return 0 if report["meets_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
