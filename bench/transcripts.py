"""The hook's tail read: latency with a 100 MB transcript against a 1 MB one.

Both files are real spotter lines repeated to size (the newest response is where a real
session leaves it: a few lines from the end). ``latest_context`` must cost the same on
both (target <= 1.1x), because it reads the end of the file, not the file. Median of
``--repeat`` alternating in-process reads; ``--json`` prints one JSON object.

    python bench/transcripts.py [--big-mb 100] [--small-mb 1] [--repeat 2000] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from ctxrelay.transcripts import latest_context

PROJECT = Path(__file__).resolve().parents[1]
SOURCE = (
    PROJECT.parent
    / "shared/corpora/claude-code-transcripts/spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
)
TARGET = 1.1


def _build(path: Path, megabytes: float, lines: list[bytes]) -> None:
    goal = int(megabytes * 1e6)
    written = 0
    with path.open("wb") as f:
        while written < goal:
            for line in lines:
                f.write(line)
                written += len(line)
                if written >= goal:
                    break
        f.writelines(lines[-40:])  # end as the session ended


def _read(path: Path) -> float:
    start = time.perf_counter()
    reading = latest_context(path)
    elapsed = time.perf_counter() - start
    if reading is None or not reading.context_tokens:
        raise SystemExit(f"bench/transcripts.py: no reading from {path}")
    return elapsed


def _medians(small: Path, big: Path, repeat: int) -> tuple[float, float]:
    """Median of each, the two reads alternating so both see the same machine load."""
    t_small, t_big = [], []
    for _ in range(repeat):
        t_small.append(_read(small))
        t_big.append(_read(big))
    return statistics.median(t_small), statistics.median(t_big)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big-mb", type=float, default=100)
    parser.add_argument("--small-mb", type=float, default=1)
    parser.add_argument("--repeat", type=int, default=2000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not SOURCE.is_file():
        sys.stderr.write(f"bench/transcripts.py: no corpus transcript at {SOURCE}\n")
        return 1
    lines = SOURCE.read_bytes().splitlines(keepends=True)
    with tempfile.TemporaryDirectory() as tmp:
        small, big = Path(tmp) / "small.jsonl", Path(tmp) / "big.jsonl"
        _build(small, args.small_mb, lines)
        _build(big, args.big_mb, lines)
        _medians(small, big, 5)
        t_small, t_big = _medians(small, big, args.repeat)
        sizes = (small.stat().st_size, big.stat().st_size)
    ratio = t_big / t_small
    result = {
        "small_bytes": sizes[0],
        "big_bytes": sizes[1],
        "small_ms": round(t_small * 1e3, 4),
        "big_ms": round(t_big * 1e3, 4),
        "ratio": round(ratio, 3),
        "target_ratio": TARGET,
        "pass": ratio <= TARGET,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"latest_context: {sizes[0] / 1e6:.0f} MB {result['small_ms']} ms, "
            f"{sizes[1] / 1e6:.0f} MB {result['big_ms']} ms -> {result['ratio']}x "
            f"(target <= {TARGET}x: {'pass' if result['pass'] else 'FAIL'})"
        )
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
