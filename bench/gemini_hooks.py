"""Whole-process latency of the Gemini hook (``docs/gemini.md``), each event against a
bare ``node -e 0`` measured in the same run (what every Node-based hook pays at least)
and a bare ``python -c pass``:

- ``BeforeTool`` of ``cat big.txt`` (the guard denies it from its words) and of ``ls``
  (nothing to judge: the common case);
- ``AfterTool`` of ``ls`` (the re-read record: nothing printed);
- ``BeforeTool`` of ``cat notes.txt`` again (a re-read: denied once the session file,
  200 records written since the first print, shows its result still there);
- ``BeforeAgent`` and ``AfterAgent`` on a session file of 2,000 records (the context
  read from its tail; below the slider, nothing to say).

The hook runs as the CLI starts it: ``sh -c`` the command ``ctxrelay gemini install``
writes, the payload on stdin. Target: every hook <= 1.0x a bare Node start. Runs are
interleaved round-robin so machine load hits every variant alike; medians of the wall
time, and of the CPU time each run used (which waiting for a core on a loaded machine
does not inflate), with the load average.

    python bench/gemini_hooks.py [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ctxrelay.gemini.setup.launcher import hook_candidates
from ctxrelay.gemini.setup.probe import sample_payload

TARGET = 1.0


def _timed(argv: list[str], stdin: str, env: dict[str, str] | None = None) -> tuple[float, float]:
    """The wall time of one run, and the CPU time (user and system) it used: on a loaded
    machine the wall time includes waiting for a core, the CPU time does not."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, input=stdin, capture_output=True, text=True, check=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _session(path: Path, records: int) -> None:
    lines: list[dict[str, object]] = [
        {"sessionId": "bench", "projectHash": "0" * 64, "startTime": "", "kind": "main"},
    ]
    for i in range(records):
        kind = "gemini" if i % 2 else "user"
        record: dict[str, object] = {"id": f"m{i}", "type": kind, "content": "x" * 400}
        if kind == "gemini":
            record["tokens"] = {"input": 1_000 + i, "output": 10, "cached": 0, "thoughts": 0}
            record["model"] = "gemini-2.5-pro"
        lines.append(record)
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in lines))


def _reread(root: Path, command: str, env: dict[str, str]) -> str:
    """The payload of a print of ``notes.txt`` again: the hook remembered the first print
    at its ``AfterTool`` when the session file had 2,000 records, then the CLI wrote its
    result and 200 records more."""
    (root / "notes.txt").write_text("a note\n" * 50)
    payload = sample_payload("AfterTool", root, "cat notes.txt")
    session = root / "reread.jsonl"
    payload["transcript_path"] = str(session)
    _session(session, 2_000)
    subprocess.run(
        ["/bin/sh", "-c", command], input=json.dumps(payload), text=True, check=True, env=env
    )
    answer = {"id": "c1", "name": "run_shell_command", "response": {"output": "a note\n" * 50}}
    result = {"id": "r1", "type": "user", "content": [{"functionResponse": answer}]}
    later = [json.dumps(result, separators=(",", ":"))]
    more = ({"id": f"n{i}", "type": "user", "content": "x" * 400} for i in range(200))
    later += [json.dumps(r, separators=(",", ":")) for r in more]
    with session.open("a") as handle:
        handle.write("".join(line + "\n" for line in later))
    payload = sample_payload("BeforeTool", root, "cat notes.txt")
    payload["transcript_path"] = str(session)
    return json.dumps(payload)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    opts = parser.parse_args(argv)
    node = shutil.which("node")
    command = hook_candidates()[-1]
    with tempfile.TemporaryDirectory(prefix="ctxrelay-bench-gemini-") as tmp:
        root = Path(tmp)
        (root / "big.txt").write_text("".join(f"line {i:06d}\n" for i in range(8_000)))
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "CTXRELAY_STATE_DIR": str(root / "state")}
        cases: dict[str, str] = {}
        for event, shell in (
            ("BeforeTool", "cat big.txt"),
            ("BeforeTool", "ls"),
            ("AfterTool", "ls"),
            ("BeforeAgent", "ls"),
            ("AfterAgent", "ls"),
        ):
            payload = sample_payload(event, root, shell)
            _session(Path(payload["transcript_path"]), 2_000)
            name = f"{event} ({shell})" if event.endswith("Tool") else event
            cases[name] = json.dumps(payload)
        cases["BeforeTool (re-read)"] = _reread(root, command, env)
        repeat = subprocess.run(
            ["/bin/sh", "-c", command],
            input=cases["BeforeTool (re-read)"],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        if '"deny"' not in repeat.stdout:
            raise SystemExit(f"the re-read case was not denied: {repeat.stdout!r}")
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        base: dict[str, list[tuple[float, float]]] = {"python -c pass": [], "node -e 0": []}
        for _ in range(opts.runs):
            base["python -c pass"].append(_timed([sys.executable, "-c", "pass"], ""))
            if node is not None:
                base["node -e 0"].append(_timed([node, "-e", "0"], ""))
            for name, stdin in cases.items():
                times[name].append(_timed(["/bin/sh", "-c", command], stdin, env))
    every = {k: v for k, v in {**base, **times}.items() if v}
    med = {k: statistics.median(w for w, _ in v) * 1000 for k, v in every.items()}
    cpu = {k: statistics.median(c for _, c in v) * 1000 for k, v in every.items()}
    node_ms, node_cpu = med.get("node -e 0"), cpu.get("node -e 0")
    x_node = {name: None if node_ms is None else round(med[name] / node_ms, 2) for name in times}
    rows = [
        {
            "case": name,
            "ms": round(med[name], 1),
            "cpu_ms": round(cpu[name], 1),
            "x_python": round(med[name] / med["python -c pass"], 2),
            "x_node": x_node[name],
            "x_node_cpu": None if not node_cpu else round(cpu[name] / node_cpu, 2),
        }
        for name in times
    ]
    ok = node_ms is None or all(x is not None and x <= TARGET for x in x_node.values())
    load = round(os.getloadavg()[0], 1)
    if opts.json:
        print(
            json.dumps({"rows": rows, "baselines_ms": med, "cpu_ms": cpu, "load": load, "ok": ok})
        )
    else:
        print(
            f"load average {load}; node -e 0: {node_ms and round(node_ms, 1)} ms "
            f"({node_cpu and round(node_cpu, 1)} ms CPU); python -c pass: "
            f"{round(med['python -c pass'], 1)} ms ({round(cpu['python -c pass'], 1)} ms CPU)"
        )
        for r in rows:
            print(
                f"{r['case']:<24} {r['ms']:>7} ms  {r['x_node']}x node  "
                f"{r['x_python']}x python  CPU {r['cpu_ms']} ms, {r['x_node_cpu']}x node's"
            )
        print("every hook within 1.0x a bare Node start" if ok else "OVER the 1.0x Node target")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
