"""``ctxrelay analyze --json`` against ccusage's native binary, whole process, same files.

For each size asked for (10 MB, 200 MB and 1 GB by default) a Claude Code config
directory (``<tmp>/<size>/projects/<project>/...``) is filled with copies of the shared
transcripts. Each copy has its session ids (and every other
UUID), message ids and request ids rewritten, so neither tool dedupes one copy against
another: the work grows with the bytes. The copies are made once, for the largest size;
the smaller sizes hard-link the first of them.

ccusage reads a directory through ``CLAUDE_CONFIG_DIR``, ctxrelay through its path.
Both run as a user runs them, one process per run, interleaved round after round on the
same page cache; the best time of each counts, and each run's peak resident memory is
that child's own (``os.wait4`` in a small launcher, the same for both). Targets:
ctxrelay's time at most 1.0 times ccusage's from 1 GB on, its peak memory at most 0.75
times, and the same token totals at every size.

At the smallest size it also says where ctxrelay's time goes, in a fresh process as the
command runs: the interpreter's start, the imports of ``analyze --json``, the read, the
analysis after it (the sessions, prices and replays) and the JSON (best of the rounds).

ccusage is the one ``make setup`` installed into ``.venv/codex`` (its pin is in
``scripts/codex/package.json``), else installed with ``npm install ccusage@PIN`` into a
cache folder in the temp directory (``PIN`` has a native binary for linux-x64,
linux-arm64, darwin and win32); the binary in
``node_modules/@ccusage/ccusage-<platform>/bin`` is run itself, not the
``node_modules/.bin`` wrapper (node's start-up would be measured, not ccusage). Without
npm, or when the install fails, the script says so and compares instead against a bare
``json.loads``-per-line loop over the same files in one process.

    python bench/analyze.py [--sizes 10,200,1000] [--repeat R] [--json]
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import os
import platform
import re
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

PROJECT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CTXRELAY_SHARED_DIR", PROJECT.parent / "shared"))
CORPORA = {
    "spotter": SHARED / "corpora" / "claude-code-transcripts" / "spotter",
    "capture": SHARED / "corpora" / "claude-code-capture" / "projects",
}
TIMED = ("spotter",)
"""The corpora copied for the timed runs. The capture is left out: its responses report a
zero ``cache_creation`` split beside their cache writes, which ccusage counts as no writes
(``docs/analyze.md``, "Against ccusage"), so the token totals could not agree."""
CCUSAGE_PINS = PROJECT / "scripts" / "codex" / "package.json"
CCUSAGE_VERSION: str = json.loads(CCUSAGE_PINS.read_text())["dependencies"]["ccusage"]
"""ccusage's one pin, which ``make setup`` installs from: the newest ccusage whose platform
binaries are all published (20.0.26 has none)."""
TIME_TARGET = 1.0
TIME_TARGET_FROM_MB = 1000
"""The time target holds from this size on (issue 33: at 1 GB); below it the start-up,
which ccusage's native binary barely has, is most of a run, and the ratio is reported."""
MEMORY_TARGET = 0.75
SIZES_MB = (10, 200, 1000)

_UUID = re.compile(rb"[0-9a-f]{8}(-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")
_IDS = re.compile(rb'"(msg_|req_)')


def _platform_package() -> str | None:
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    system = {"linux": "linux", "darwin": "darwin", "win32": "win32"}.get(sys.platform)
    if arch is None or system is None:
        return None
    return f"ccusage-{system}-{arch}"


def install_ccusage(log: Callable[[str], None]) -> Path | None:
    """The ccusage native binary, installed once into the temp directory's cache."""
    package = _platform_package()
    if package is None:
        log(f"no ccusage binary is published for {sys.platform}/{platform.machine()}")
        return None
    npm = shutil.which("npm")
    if npm is None:
        log("npm is not installed, so ccusage cannot be")
        return None
    name = "ccusage.exe" if sys.platform == "win32" else "ccusage"
    installed = Path(sys.prefix) / "codex" / "node_modules" / "@ccusage" / package / "bin" / name
    if installed.is_file() and os.access(installed, os.X_OK):
        return installed  # make setup's, from the same pin
    home = Path(tempfile.gettempdir()) / f"ctxrelay-bench-ccusage-{CCUSAGE_VERSION}"
    binary = home / "node_modules" / "@ccusage" / package / "bin" / name
    if not binary.is_file():
        home.mkdir(parents=True, exist_ok=True)
        (home / "package.json").write_text('{"private": true}\n')
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", f"ccusage@{CCUSAGE_VERSION}"],
            cwd=home,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0 or not binary.is_file():
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            log(f"npm install ccusage@{CCUSAGE_VERSION} failed: {last}")
            return None
    # npm leaves the platform binary without its execute bit (the wrapper sets it).
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return binary


def _rewritten(data: bytes, copy: int) -> bytes:
    """``data`` with every UUID, message id and request id made unique to ``copy``."""
    prefix = b"%08x" % copy
    data = _UUID.sub(lambda m: prefix + m.group(1), data)
    return _IDS.sub(lambda m: b'"' + m.group(1) + b"c%d_" % copy, data)


def _copy(source: Path, into: Path, copy: int) -> None:
    for path in source.rglob("*"):
        if not path.is_file():
            continue
        relative = _rewritten(os.fsencode(path.relative_to(source)), copy)
        target = into / os.fsdecode(relative)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(_rewritten(path.read_bytes(), copy))


def _layout(into: Path, copies: int, names: Sequence[str] = tuple(CORPORA)) -> Path:
    """A Claude Code config directory holding ``copies`` copies of each corpus named
    (``<name>-<k>``), their ids rewritten per copy."""
    projects = into / "projects"
    for name in names:
        source = CORPORA[name]
        for k in range(copies):
            _copy(source, projects / f"{name}-{k}", k)
    return projects


def _linked(copies: Path, into: Path, projects: list[str]) -> Path:
    """A config directory whose ``projects/`` hard-links the named project folders."""
    for name in projects:
        for path in (copies / name).rglob("*"):
            if path.is_file():
                target = into / "projects" / name / path.relative_to(copies / name)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.link(path, target)
    return into / "projects"


def _compiled() -> None:
    """Byte-compile the package as an install does: a checkout run with
    ``PYTHONDONTWRITEBYTECODE`` set would otherwise compile every edited module at every
    start, and that would be measured."""
    import ctxrelay

    compileall.compile_dir(Path(ctxrelay.__file__).parent, quiet=1)


def _ctxrelay() -> list[str]:
    script = Path(sys.executable).with_name("ctxrelay")
    return [str(script)] if script.exists() else [sys.executable, "-m", "ctxrelay"]


class Run(NamedTuple):
    seconds: float
    peak_bytes: int
    stdout: bytes
    cpu_seconds: float = 0.0
    """User and system time of the child and the workers it waited for: on a loaded
    machine wall time waits for a core, CPU time does not."""


_LAUNCH = """
import json, os, sys, time
start = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - start
scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: KiB on Linux, bytes on macOS
with open(sys.argv[1], "w") as f:
    cpu = usage.ru_utime + usage.ru_stime  # its own and its reaped workers'
    json.dump([seconds, usage.ru_maxrss * scale, os.waitstatus_to_exitcode(status), cpu], f)
"""
"""Runs a command and reports its wall time, peak memory and CPU time. A child's ``ru_maxrss``
starts at its parent's peak (Linux carries it across fork and exec), so the child is
started from this small interpreter, not from the benchmark's larger one; both tools get
the same floor."""


def _run(command: Sequence[str], env: dict[str, str]) -> Run:
    """One child: its wall time, its own peak resident memory, its output."""
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryDirectory() as tmp,
    ):
        report = Path(tmp) / "run.json"
        launch = [sys.executable, "-c", _LAUNCH, str(report), *command]
        subprocess.run(launch, env=env, stdout=out, stderr=err, check=False)
        seconds, peak, code, cpu = (
            json.loads(report.read_text()) if report.exists() else (0, 0, 1, 0)
        )
        if code != 0:
            err.seek(0)
            message = err.read().decode(errors="replace")
            raise SystemExit(f"bench/analyze.py: {command[0]} failed: {message}")
        out.seek(0)
        return Run(seconds, peak, out.read(), cpu)


_PHASES = """
import json, sys, time
c0, t0 = time.process_time(), time.perf_counter()
import ctxrelay.cli.analyze, ctxrelay.analyze, ctxrelay.analyze._parallel
c1, t1 = time.process_time(), time.perf_counter()
from ctxrelay.analyze import analyze_paths, report_json
from ctxrelay.analyze._parallel import ReadAlready, Reading, read_session, start_reading
started = start_reading([sys.argv[1]], workers=1)
files = [f for session in started.files.values() for f in session]
done = read_session(files)
c2, t2 = time.process_time(), time.perf_counter()
read = Reading(started.sessions, workers=1, read=ReadAlready(done))
reports = analyze_paths([sys.argv[1]], reading=read)
c3, t3 = time.process_time(), time.perf_counter()
text = json.dumps(report_json(reports))
c4, t4 = time.process_time(), time.perf_counter()
wall = {"imports": t1 - t0, "read": t2 - t1, "analysis": t3 - t2, "json": t4 - t3}
cpu = {"imports": c1 - c0, "read": c2 - c1, "analysis": c3 - c2, "json": c4 - c3}
print(json.dumps({"wall": wall, "cpu": cpu}))
"""
"""The phases of ``analyze --json`` in one fresh process, timed from inside it (wall
and this process's CPU time: below ``MIN_PARALLEL_BYTES`` it reads alone)."""


def _where(projects: Path, repeat: int, env: dict[str, str]) -> dict[str, dict[str, float]]:
    """Where a run's time goes, wall and CPU: the interpreter's start (``python -c
    pass``) and the phases of :data:`_PHASES`, each the best of ``repeat`` fresh
    processes."""
    starts = [_run([sys.executable, "-c", "pass"], env) for _ in range(repeat)]
    out = {
        "wall": {"start": min(r.seconds for r in starts)},
        "cpu": {"start": min(r.cpu_seconds for r in starts)},
    }
    for _ in range(repeat):
        got = json.loads(_run([sys.executable, "-c", _PHASES, str(projects)], env).stdout)
        for kind in ("wall", "cpu"):
            for name, seconds in got[kind].items():
                out[kind][name] = min(out[kind].get(name, seconds), seconds)
    return out


def _bare(files: list[Path]) -> Run:
    start = time.perf_counter()
    loads = json.loads
    for path in files:
        with path.open("rb") as f:
            for line in f:
                with contextlib.suppress(ValueError):
                    loads(line)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return Run(time.perf_counter() - start, peak, b"")


def _ours_totals(doc: dict[str, Any]) -> dict[str, int]:
    usage = doc["totals"]["total"]["usage"]
    return {
        "input": usage["input_tokens"],
        "output": usage["output_tokens"],
        "cache_write": usage["cache_creation_input_tokens"],
        "cache_read": usage["cache_read_input_tokens"],
    }


def _their_totals(doc: dict[str, Any]) -> dict[str, int]:
    totals = doc["totals"]
    return {
        "input": totals["inputTokens"],
        "output": totals["outputTokens"],
        "cache_write": totals["cacheCreationTokens"],
        "cache_read": totals["cacheReadTokens"],
    }


def _measure(
    projects: Path, binary: Path | None, repeat: int, env: dict[str, str]
) -> dict[str, Any]:
    files = sorted(p for p in projects.rglob("*.jsonl") if p.is_file())
    size = sum(p.stat().st_size for p in files)
    env = {**env, "CLAUDE_CONFIG_DIR": str(projects.parent)}
    ours_cmd = [*_ctxrelay(), "analyze", str(projects), "--json"]
    ours = json.loads(_run(ours_cmd, env).stdout)  # warms the page cache too
    contenders: dict[str, Callable[[], Run]] = {"ctxrelay": lambda: _run(ours_cmd, env)}
    theirs = None
    if binary is not None:
        cc_cmd = [str(binary), "claude", "session", "--json", "--offline"]
        theirs = json.loads(_run(cc_cmd, env).stdout)
        contenders["ccusage"] = lambda: _run(cc_cmd, env)
        baseline = "ccusage"
    else:
        contenders["json.loads loop"] = lambda: _bare(files)
        baseline = "json.loads loop"
    runs: dict[str, list[Run]] = {name: [] for name in contenders}
    for _ in range(repeat):  # interleaved: every contender sees the same load
        for name, func in contenders.items():
            runs[name].append(func())
    best = {name: min(r.seconds for r in got) for name, got in runs.items()}
    cpu = {name: min(r.cpu_seconds for r in got) for name, got in runs.items()}
    peak = {name: max(r.peak_bytes for r in got) for name, got in runs.items()}
    mb = size / 1e6
    time_ratio = best["ctxrelay"] / best[baseline]
    memory_ratio = peak["ctxrelay"] / peak[baseline]
    ours_totals = _ours_totals(ours)
    their_totals = _their_totals(theirs) if theirs is not None else None
    same = their_totals is None or ours_totals == their_totals
    return {
        "files": len(files),
        "megabytes": round(mb, 1),
        "baseline": baseline,
        "ctxrelay_seconds": round(best["ctxrelay"], 3),
        "baseline_seconds": round(best[baseline], 3),
        "ctxrelay_mb_s": round(mb / best["ctxrelay"], 1),
        "baseline_mb_s": round(mb / best[baseline], 1),
        "time_ratio": round(time_ratio, 2),
        "ctxrelay_cpu_seconds": round(cpu["ctxrelay"], 3),
        "baseline_cpu_seconds": round(cpu[baseline], 3),
        "cpu_ratio": round(cpu["ctxrelay"] / cpu[baseline], 2) if cpu[baseline] else None,
        "ctxrelay_peak_mb": round(peak["ctxrelay"] / 1e6, 1),
        "baseline_peak_mb": round(peak[baseline] / 1e6, 1),
        "memory_ratio": round(memory_ratio, 2),
        "ctxrelay_tokens": ours_totals,
        "baseline_tokens": their_totals,
        "same_tokens": same,
        "time_judged": False,
        "pass": memory_ratio <= MEMORY_TARGET and same,
    }


def _sizes(spec: str) -> list[int]:
    try:
        sizes = sorted({int(part) for part in spec.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of megabytes: {spec!r}") from None
    if not sizes or sizes[0] <= 0:
        raise argparse.ArgumentTypeError(f"not a list of megabytes: {spec!r}")
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes",
        type=_sizes,
        default=list(SIZES_MB),
        help="corpus sizes in MB, comma-separated (10,200,1000)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the best counts (3)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    missing = [str(p) for p in CORPORA.values() if not p.is_dir()]
    if missing:
        sys.stderr.write(f"bench/analyze.py: no corpus at {', '.join(missing)}\n")
        return 1
    notes: list[str] = []
    binary = install_ccusage(notes.append)
    _compiled()
    one_copy = sum(
        p.stat().st_size for name in TIMED for p in CORPORA[name].rglob("*") if p.is_file()
    )
    env = {**os.environ, "NO_COLOR": "1"}
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        copies = max(1, round(max(args.sizes) * 1_000_000 / one_copy))
        store = _layout(root / "copies", copies, TIMED)
        names = sorted(p.name for p in store.iterdir())
        for mb in args.sizes:
            wanted = max(1, round(mb * 1_000_000 / one_copy))
            chosen = [n for n in names if int(n.rsplit("-", 1)[-1]) < wanted]
            projects = _linked(store, root / f"{mb}mb", chosen)
            result = _measure(projects, binary, args.repeat, env)
            if mb >= TIME_TARGET_FROM_MB:  # the size asked for, not the bytes the copies hold
                result["time_judged"] = True
                result["pass"] = result["pass"] and result["time_ratio"] <= TIME_TARGET
            results.append(result)
            if mb == min(args.sizes):
                where = _where(projects, args.repeat, env)
                result["where_seconds"] = {
                    kind: {k: round(v, 3) for k, v in phases.items()}
                    for kind, phases in where.items()
                }
    passed = all(r["pass"] for r in results)
    doc = {
        "ccusage_version": CCUSAGE_VERSION if binary is not None else None,
        "baseline_note": "; ".join(notes) or None,
        "repeat": args.repeat,
        "time_target": TIME_TARGET,
        "memory_target": MEMORY_TARGET,
        "sizes": results,
        "pass": passed,
    }
    if args.json:
        print(json.dumps(doc))
        return 0 if passed else 1
    for note in notes:
        print(f"(no ccusage: {note}; comparing with a bare json.loads loop)")
    label = f"ccusage {CCUSAGE_VERSION}" if binary is not None else "json.loads loop"
    print(f"ctxrelay analyze --json against {label}, whole process, best of {args.repeat}")
    print(
        f"{'MB':>7} {'files':>6} {'ctxrelay s':>10} {'base s':>8} {'time':>6} "
        f"{'ctxrelay MB':>11} {'base MB':>8} {'memory':>7}  tokens  cpu s (ratio)"
    )
    for r in results:
        print(
            f"{r['megabytes']:>7} {r['files']:>6} {r['ctxrelay_seconds']:>10.3f} "
            f"{r['baseline_seconds']:>8.3f} {r['time_ratio']:>5}x "
            f"{r['ctxrelay_peak_mb']:>11} {r['baseline_peak_mb']:>8} {r['memory_ratio']:>6}x  "
            f"{'same' if r['same_tokens'] else 'DIFFER':<6}  {r['ctxrelay_cpu_seconds']:.3f} / "
            f"{r['baseline_cpu_seconds']:.3f} ({r['cpu_ratio']}x)"
        )
    for r in results:
        spent = r.get("where_seconds")
        if spent:
            print(f"where the time goes at {r['megabytes']} MB (fresh processes, best of "
                  f"{args.repeat}; wall / CPU):")  # fmt: skip
            for name, wall in spent["wall"].items():
                print(f"  {name:<9} {wall:.3f} s / {spent['cpu'][name]:.3f} s")
    verdict = "pass" if passed else "FAIL"
    print(
        f"targets: time <= {TIME_TARGET}x from {TIME_TARGET_FROM_MB} MB, memory <= "
        f"{MEMORY_TARGET}x, same tokens: {verdict}"
    )
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
