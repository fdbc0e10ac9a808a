"""The analysis after the read: what ``ctxrelay analyze --json`` spends, in process,
once the transcripts are read.

``bench/analyze.py`` times the whole process against ccusage; this script times the
part that follows the read (``analyze_paths`` given the read transcripts: the dedupe,
the bills, the replays under each policy; then ``report_json`` and the JSON encoding
``print_json`` does), so a change to the replay or the report shows here without the
read and the start-up around it. The corpus (the shared Claude Code transcripts and the
2.1.197 capture) is laid out as ``bench/analyze.py`` lays it out and read once.

Two figures, each as a ratio to a bare loop over the same responses (one attribute read
per response) timed the same way, so the machine's speed and load cancel:

* **warm**: the best of ``--repeat`` runs in one process;
* **cold**: the first run in a fresh process (the ``analyze --json`` case), the best of
  ``--processes`` processes.

With ``--sweep A..B`` the policies' sweep is replayed too.

    python bench/analyze_phase.py [--repeat R] [--processes P] [--sweep 30..90] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from analyze import CORPORA, _layout

PHASES = ("analyze", "report_json", "dumps")


def _prepared(projects: str, sweep_spec: str | None) -> tuple[Any, Any, list[Any]]:
    """Read the corpus once (and import what the phase runs, so no import is timed);
    return the read, the sweep and the responses."""
    import ctxrelay.analyze._report  # noqa: F401 - imported here, not in the timed phase
    from ctxrelay.analyze._discover import discover, files_of
    from ctxrelay.analyze._parallel import ReadAlready, Reading, read_session
    from ctxrelay.analyze._policies import parse_sweep

    sessions = discover([projects])
    scanned, failed = read_session(files_of(sessions))

    def read() -> Reading:
        """A read already done, as ``analyze_paths`` takes a started one."""
        return Reading(sessions, workers=1, read=ReadAlready((scanned, failed)))

    responses = [r for t in scanned.values() for r in (*t.responses, *t.sidechain_responses)]
    sweep = parse_sweep(sweep_spec) if sweep_spec else None
    return read, sweep, responses


def _phase(projects: str, read: Any, sweep: Any) -> dict[str, float]:
    """One run of the phase, each part timed."""
    from ctxrelay.analyze._report import analyze_paths, report_json

    start = time.perf_counter()
    reports = analyze_paths([projects], reading=read(), sweep=sweep, on_skip=lambda p, e: None)
    analyzed = time.perf_counter()
    doc = report_json(reports, sweep)
    reported = time.perf_counter()
    json.dumps(doc, ensure_ascii=False)  # what print_json writes
    done = time.perf_counter()
    return {
        "analyze": analyzed - start,
        "report_json": reported - analyzed,
        "dumps": done - reported,
    }


def _bare(responses: list[Any]) -> float:
    start = time.perf_counter()
    total = 0
    for r in responses:
        total += r.usage.input_tokens
    return time.perf_counter() - start


def _child(projects: str, sweep_spec: str | None) -> None:
    """A fresh process: the phase's first run, then the bare loop's first run."""
    read, sweep, responses = _prepared(projects, sweep_spec)
    parts = _phase(projects, read, sweep)
    print(json.dumps({"parts": parts, "bare": _bare(responses), "responses": len(responses)}))


def _warm(projects: str, sweep_spec: str | None, repeat: int) -> dict[str, Any]:
    read, sweep, responses = _prepared(projects, sweep_spec)
    best = dict.fromkeys(PHASES, float("inf"))
    whole = bare = float("inf")
    for _ in range(repeat):  # interleaved, so both see the same load
        parts = _phase(projects, read, sweep)
        whole = min(whole, sum(parts.values()))
        for name, seconds in parts.items():
            best[name] = min(best[name], seconds)
        bare = min(bare, _bare(responses))
    return {"parts": best, "whole": whole, "bare": bare, "responses": len(responses)}


def _cold(projects: str, sweep_spec: str | None, processes: int) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", projects]
    if sweep_spec:
        command += ["--sweep", sweep_spec]
    best = dict.fromkeys(PHASES, float("inf"))
    whole = bare = float("inf")
    for _ in range(processes):
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        sample = json.loads(done.stdout)
        whole = min(whole, sum(sample["parts"].values()))
        for name, seconds in sample["parts"].items():
            best[name] = min(best[name], seconds)
        bare = min(bare, sample["bare"])
    return {"parts": best, "whole": whole, "bare": bare}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=100, help="warm runs; the best counts")
    parser.add_argument("--processes", type=int, default=15, help="cold runs, one a process")
    parser.add_argument("--sweep", metavar="A..B", help="replay a sweep too (as --sweep)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", metavar="PROJECTS", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child, args.sweep)
        return 0
    missing = [str(p) for p in CORPORA.values() if not p.is_dir()]
    if missing:
        sys.stderr.write(f"bench/analyze_phase.py: no corpus at {', '.join(missing)}\n")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        projects = str(_layout(Path(tmp), 1))
        warm = _warm(projects, args.sweep, args.repeat)
        cold = _cold(projects, args.sweep, args.processes)
    result: dict[str, Any] = {"responses": warm["responses"], "sweep": args.sweep}
    for name, figures in (("warm", warm), ("cold", cold)):
        result[name] = {
            "seconds": round(figures["whole"], 5),
            "parts_seconds": {k: round(v, 5) for k, v in figures["parts"].items()},
            "bare_loop_seconds": round(figures["bare"], 6),
            "ratio_to_bare_loop": round(figures["whole"] / figures["bare"], 1),
        }
    if args.json:
        print(json.dumps(result))
        return 0
    print(
        f"analysis after the read, {result['responses']} responses"
        + (f", sweep {args.sweep}" if args.sweep else "")
        + f" (warm: best of {args.repeat} runs; cold: first run, best of {args.processes})"
    )
    for name in ("warm", "cold"):
        r = result[name]
        parts = ", ".join(f"{k} {v * 1000:.2f}" for k, v in r["parts_seconds"].items())
        print(
            f"  {name}  {r['seconds'] * 1000:6.2f} ms ({parts} ms)  "
            f"{r['ratio_to_bare_loop']}x a bare loop over the responses "
            f"({r['bare_loop_seconds'] * 1e6:.0f} us)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
