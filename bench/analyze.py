"""``ctxrelay analyze --json`` against ccusage's native binary, whole process, same files.

The corpus (the shared Claude Code transcripts and the 2.1.197 capture) is laid out as a
Claude Code config directory (``<tmp>/projects/<project>/...``) in a temporary folder;
ccusage reads it through ``CLAUDE_CONFIG_DIR``, ctxrelay through its path. Both run as a
user runs them, one process per run, interleaved round after round on the same page
cache; the best run of each counts. Target: ctxrelay's time at most ccusage's (ratio
<= 1.0).

ccusage is installed with ``npm install ccusage@PIN`` into a cache folder in the temp
directory (``PIN`` has a native binary for linux-x64, linux-arm64, darwin and win32); the
binary in ``node_modules/@ccusage/ccusage-<platform>/bin`` is run itself, not the
``node_modules/.bin`` wrapper (node's start-up would be measured, not ccusage). Without
npm, or when the install fails, the script says so and compares instead against a bare
``json.loads``-per-line loop over the same files in one process, as before.

Also printed: MB/s of each, the per-session cost and cache writes of both tools, the
start of a bare interpreter (``python -c pass``) in the same rounds (the floor under any
Python command), and ctxrelay with its C reader turned off (``CTXRELAY_PURE_PYTHON=1``,
the pure-Python pass a machine without a compiler gets), whose output must be the same.

    python bench/analyze.py [--copies N] [--repeat R] [--json]
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import os
import platform
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CTXRELAY_SHARED_DIR", PROJECT.parent / "shared"))
CORPORA = {
    "spotter": SHARED / "corpora" / "claude-code-transcripts" / "spotter",
    "capture": SHARED / "corpora" / "claude-code-capture" / "projects",
}
CCUSAGE_VERSION = "20.0.24"
"""The newest ccusage whose platform binaries are all published (20.0.26 has none)."""
TARGET = 1.0


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
    home = Path(tempfile.gettempdir()) / f"ctxrelay-bench-ccusage-{CCUSAGE_VERSION}"
    name = "ccusage.exe" if sys.platform == "win32" else "ccusage"
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


def _layout(into: Path, copies: int) -> Path:
    """A Claude Code config directory holding ``copies`` copies of each corpus."""
    projects = into / "projects"
    for name, source in CORPORA.items():
        for k in range(copies):
            shutil.copytree(source, projects / (name if copies == 1 else f"{name}-{k}"))
    return projects


def _compiled() -> None:
    """Byte-compile the package as an install does: a checkout run with
    ``PYTHONDONTWRITEBYTECODE`` set would otherwise compile every edited module at every
    start, and that would be measured."""
    import ctxrelay

    compileall.compile_dir(Path(ctxrelay.__file__).parent, quiet=1)


def _has_c_pass() -> bool:
    from ctxrelay.transcripts._pass import has_c_pass

    return has_c_pass()


def _ctxrelay() -> list[str]:
    script = Path(sys.executable).with_name("ctxrelay")
    return [str(script)] if script.exists() else [sys.executable, "-m", "ctxrelay"]


def _run(command: Sequence[str], env: dict[str, str]) -> bytes:
    done = subprocess.run(list(command), env=env, capture_output=True, check=False)
    if done.returncode != 0:
        raise SystemExit(
            f"bench/analyze.py: {command[0]} failed: {done.stderr.decode(errors='replace')}"
        )
    return done.stdout


def _times(commands: dict[str, Callable[[], object]], repeat: int) -> dict[str, list[float]]:
    """Every run's time of each, sorted, run in turn round after round: on a shared
    machine the load changes over seconds, and interleaving lets every contender see the
    same load."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, func in commands.items():
            start = time.perf_counter()
            func()
            times[name].append(time.perf_counter() - start)
    return {name: sorted(runs) for name, runs in times.items()}


def _files(projects: Path) -> list[Path]:
    return sorted(p for p in projects.rglob("*.jsonl") if p.is_file())


def _bare(files: list[Path]) -> None:
    loads = json.loads
    for path in files:
        with path.open("rb") as f:
            for line in f:
                with contextlib.suppress(ValueError):
                    loads(line)


def _side_by_side(ours: dict[str, Any], theirs: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Per session: requests, tokens and cost of each tool (ccusage names a session by
    its project folder and its file's stem, ctxrelay by its ``sessionId``; the path ties
    them)."""
    by_stem: dict[tuple[str, str], dict[str, Any]] = {}
    for s in (theirs or {}).get("sessions", []):
        by_stem[(str(s.get("projectPath")), str(s.get("sessionId")))] = s
    rows = []
    for s in ours["sessions"]:
        stem = Path(s["path"]).stem
        other = by_stem.get((str(s["project"]), stem), {})
        usage = s["total"]["usage"]
        rows.append(
            {
                "session": stem,
                "ctxrelay_requests": s["total"]["requests"],
                "ctxrelay_cache_write_tokens": usage["cache_creation_input_tokens"],
                "ctxrelay_cache_read_tokens": usage["cache_read_input_tokens"],
                "ctxrelay_cost_usd": s["cost_usd"],
                "ccusage_cache_write_tokens": other.get("cacheCreationTokens"),
                "ccusage_cache_read_tokens": other.get("cacheReadTokens"),
                "ccusage_cost_usd": other.get("totalCost"),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=1, help="copies of the corpus (1)")
    parser.add_argument("--repeat", type=int, default=15, help="rounds; the best counts (15)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    missing = [str(p) for p in CORPORA.values() if not p.is_dir()]
    if missing:
        sys.stderr.write(f"bench/analyze.py: no corpus at {', '.join(missing)}\n")
        return 1
    notes: list[str] = []
    binary = install_ccusage(notes.append)
    _compiled()
    with tempfile.TemporaryDirectory() as tmp:
        projects = _layout(Path(tmp), args.copies)
        files = _files(projects)
        size = sum(p.stat().st_size for p in files)
        env = {**os.environ, "CLAUDE_CONFIG_DIR": tmp, "NO_COLOR": "1"}
        ours_cmd = [*_ctxrelay(), "analyze", str(projects), "--json"]
        ours = json.loads(_run(ours_cmd, env))  # warms the page cache too
        pure_env = {**env, "CTXRELAY_PURE_PYTHON": "1"}
        if json.loads(_run(ours_cmd, pure_env)) != ours:
            raise SystemExit("bench/analyze.py: the C and the Python reader disagree")
        contenders: dict[str, Callable[[], object]] = {
            "ctxrelay": lambda: _run(ours_cmd, env),
            "pure": lambda: _run(ours_cmd, pure_env),
            "interpreter": lambda: _run([sys.executable, "-c", "pass"], env),
        }
        theirs = None
        if binary is not None:
            cc_cmd = [str(binary), "claude", "session", "--json", "--offline"]
            theirs = json.loads(_run(cc_cmd, env))
            contenders["ccusage"] = lambda: _run(cc_cmd, env)
        else:
            contenders["json.loads loop"] = lambda: _bare(files)
        times = _times(contenders, args.repeat)
        best = {name: runs[0] for name, runs in times.items()}
        median = {name: runs[len(runs) // 2] for name, runs in times.items()}
    mb = size / 1e6
    baseline = "ccusage" if binary is not None else "json.loads loop"
    ratio = best["ctxrelay"] / best[baseline]
    result: dict[str, Any] = {
        "files": len(files),
        "megabytes": round(mb, 2),
        "baseline": baseline,
        "baseline_note": "; ".join(notes) or None,
        "ccusage_version": CCUSAGE_VERSION if binary is not None else None,
        "ctxrelay_seconds": round(best["ctxrelay"], 4),
        "baseline_seconds": round(best[baseline], 4),
        "ctxrelay_mb_s": round(mb / best["ctxrelay"], 1),
        "baseline_mb_s": round(mb / best[baseline], 1),
        "ratio": round(ratio, 2),
        "median_ratio": round(median["ctxrelay"] / median[baseline], 2),
        "reader": "c" if _has_c_pass() else "python",
        "pure_python_seconds": round(best["pure"], 4),
        "pure_python_ratio": round(best["pure"] / best[baseline], 2),
        "interpreter_seconds": round(best["interpreter"], 4),
        "interpreter_ratio": round(best["interpreter"] / best[baseline], 2),
        "target_ratio": TARGET,
        "pass": ratio <= TARGET,
        "sessions": _side_by_side(ours, theirs),
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{len(files)} files, {mb:.1f} MB, whole process, best of {args.repeat}")
        for note in notes:
            print(f"  (no ccusage: {note}; comparing with a bare json.loads loop)")
        print(
            f"  ctxrelay analyze --json  {result['ctxrelay_seconds']:.3f} s "
            f"{result['ctxrelay_mb_s']:>7} MB/s"
        )
        print(
            f"  ... pure-Python reader   {result['pure_python_seconds']:.3f} s "
            f"({result['pure_python_ratio']}x; the C reader: {result['reader'] == 'c'})"
        )
        label = f"ccusage {CCUSAGE_VERSION} (binary)" if binary is not None else baseline
        print(f"  {label:<24} {result['baseline_seconds']:.3f} s {result['baseline_mb_s']:>7} MB/s")
        print(
            f"  python -c pass           {result['interpreter_seconds']:.3f} s "
            f"(the interpreter's start alone: {result['interpreter_ratio']}x)"
        )
        verdict = "pass" if result["pass"] else "FAIL"
        print(
            f"  ratio {result['ratio']}x (target <= {TARGET}x: {verdict}); "
            f"median run against median run {result['median_ratio']}x"
        )
        if theirs is not None:
            print("  per session: ctxrelay cost / ccusage cost (cache writes ours / theirs)")
            for row in result["sessions"]:
                mine, other = row["ctxrelay_cost_usd"], row["ccusage_cost_usd"]
                print(
                    f"    {row['session'][:36]:<36} ${mine or 0:>8.4f} / "
                    f"${other or 0:>8.4f}  ({row['ctxrelay_cache_write_tokens']:,} / "
                    f"{row['ccusage_cache_write_tokens'] or 0:,})"
                )
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
