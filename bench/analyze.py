"""Analyzer throughput against a bare ``json.loads``-per-line loop over the same files.

Both read every transcript of the corpus (sessions and their subagent files) from the
page cache; the analyzer also deduplicates, prices and replays each session under the
default policies. Prints MB/s of each and their ratio (target: >= 0.67x), best of
``--repeat`` interleaved rounds; ``--json`` prints one JSON object instead.

    python bench/analyze.py [--corpus DIR] [--copies N] [--repeat R] [--json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ctxrelay.analyze import analyze_paths, discover
from ctxrelay.analyze._report import agent_files
from ctxrelay.transcripts import scan

PROJECT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = PROJECT.parent / "shared" / "corpora" / "claude-code-transcripts"
TARGET = 0.67


def _files(root: Path) -> list[Path]:
    files: list[Path] = []
    for session in discover([root]):
        files.append(session)
        files.extend(agent_files(session))
    return files


def _bare(files: list[Path]) -> None:
    loads = json.loads
    for path in files:
        with path.open("rb") as f:
            for line in f:
                loads(line)


def _scan_only(files: list[Path]) -> None:
    for path in files:
        scan(path, agent=path.parent.name == "subagents")


def _interleaved(funcs: list[Callable[[], object]], repeat: int) -> list[float]:
    """Best time of each function, run in turn round after round: on a shared machine the
    load changes over seconds, and interleaving lets every contender see the same load."""
    best = [float("inf")] * len(funcs)
    for _ in range(repeat):
        for k, func in enumerate(funcs):
            start = time.perf_counter()
            func()
            best[k] = min(best[k], time.perf_counter() - start)
    return best


def _copy(corpus: Path, copies: int, into: Path) -> Path:
    """``copies`` copies of the corpus, so the run is long enough to time."""
    for k in range(copies):
        shutil.copytree(corpus, into / f"copy-{k}")
    return into


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--copies", type=int, default=4, help="corpus copies to read (4)")
    parser.add_argument("--repeat", type=int, default=7, help="rounds; the best counts (7)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        sys.stderr.write(f"bench/analyze.py: no corpus at {args.corpus}\n")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        root = _copy(args.corpus, args.copies, Path(tmp))
        files = _files(root)
        size = sum(p.stat().st_size for p in files)
        _bare(files)  # warm the page cache
        bare, scanned, analyzed = _interleaved(
            [lambda: _bare(files), lambda: _scan_only(files), lambda: analyze_paths([root])],
            args.repeat,
        )
    mb = size / 1e6
    result = {
        "files": len(files),
        "megabytes": round(mb, 2),
        "bare_json_loads_mb_s": round(mb / bare, 1),
        "scan_mb_s": round(mb / scanned, 1),
        "analyze_mb_s": round(mb / analyzed, 1),
        "scan_ratio": round(bare / scanned, 2),
        "analyze_ratio": round(bare / analyzed, 2),
        "target_ratio": TARGET,
        "pass": bare / analyzed >= TARGET,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{len(files)} files, {mb:.1f} MB, best of {args.repeat}")
        print(f"  bare json.loads loop  {result['bare_json_loads_mb_s']:>8} MB/s")
        print(f"  transcripts.scan      {result['scan_mb_s']:>8} MB/s  ({result['scan_ratio']}x)")
        print(
            f"  ctxrelay analyze      {result['analyze_mb_s']:>8} MB/s  "
            f"({result['analyze_ratio']}x, target >= {TARGET}x: "
            f"{'pass' if result['pass'] else 'FAIL'})"
        )
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
