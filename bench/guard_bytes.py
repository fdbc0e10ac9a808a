"""Benchmark what the guard saves: the bytes the model receives with it and without it.

A corpus of realistic commands (the cases of issue 36 and more) runs on generated files
of realistic sizes, through each host's guard, in-process as the hook judges them:

- **without** the guard: what the host itself hands the model of the real output (run
  with bash here), given its own cap: Claude Code keeps an output up to its cap whole and
  a longer one as a 2 KB preview plus a saved file; Codex cuts in the middle, to 10,000
  bytes for the gpt-5 family and 10,000 tokens for later models, behind a header; the
  Gemini CLI keeps an output of up to 40,000 characters whole and of a longer one the
  first 8,000 and last 32,000; OpenCode keeps the last 50 KB of a longer output (the
  whole saved to a file);
- **with** it: the same when allowed; when denied, the deny as the host shows it
  (``PreToolUse:Bash hook error: …`` in Claude Code, ``Command blocked by PreToolUse
  hook: …`` in Codex, ``Tool execution blocked: …`` in the Gemini CLI, the reason as it
  is in OpenCode) plus the alternative the reason offers, followed: the Read call's lines
  with the Read tool's line numbers (OpenCode's ``read`` with ``N: ``), or the page
  command's output as the host hands it over.

The Read cases (Claude Code only: Codex has no Read tool) add a 1 MB Read with
``allow_large`` at 20,000 tokens of a 200,000 window, and a second full Read of the same
file; the repeat cases print a file again, whole or a range already printed (Codex,
the Gemini CLI). Target (``docs/guard.md``): with the guard never more on any single
case, and less in total, per host. The host facts are ``ctxrelay.budget.bounds``'
(measured on Claude Code 2.1.332, Codex 0.171 and the Gemini CLI 0.61.0,
``docs/claude-code-facts.md``, ``docs/codex-facts.md``, ``docs/gemini-facts.md``).

    python bench/guard_bytes.py          # the table
    python bench/guard_bytes.py --json   # one JSON object
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from ctxrelay.budget.bounds import CODEX_OUTPUT_HEADER_BYTES
from ctxrelay.claude.guard import bash as claude_bash
from ctxrelay.claude.guard import read as claude_read
from ctxrelay.claude.guard._reads import READ_LINE_PREFIX
from ctxrelay.codex import guard as codex_guard
from ctxrelay.gemini import guard as gemini_guard
from ctxrelay.hooks.guard.output import HostOutput
from ctxrelay.opencode import guard as opencode_guard

CLAUDE_READ_MAX_BYTES = 256 * 1024
"""Claude Code's Read refuses a larger file unless the call says ``allow_large``."""

CLAUDE_DENY = "PreToolUse:Bash hook error: "
CODEX_DENY = "Command blocked by PreToolUse hook: "
GEMINI_DENY = "Tool execution blocked: "

GEMINI_OUTPUT_HEADER_BYTES = 73
"""What the Gemini CLI 0.61.0 puts around a shell command's output in the function
response (``<untrusted_context>``, ``Output:``, the process group), measured on the real
CLI; a cut output has its notice and the spill file's path besides (about 220 more)."""
OPENCODE_DENY = ""
"""OpenCode hands the model the plugin's thrown reason as the call's result, as it is."""
OPENCODE_READ_WRAP = 120
"""What OpenCode's ``read`` puts around a file's lines (its path, type, the ``offset``
hint), about."""

COMMANDS = (
    "cat src/app.py",
    "cat README.md",
    "cat notes.md",
    "cat big.log",
    "head -50 big.log",
    "tail -n 100 big.log",
    "tail -n 5000 big.log",
    "sed -n '100,400p' big.log",
    "sed -n '1,5p' big.json",
    "head -n 1 bundle.min.js",
    "head -c 4000 big.log",
    "nl notes.md",
    "awk '{print}' notes.md",
    "python3 -c 'print(open(\"notes.md\").read())'",
    "tac notes.md",
    "sed '' notes.md",
    "jq . small.json",
    "cat notes.md | tee copy.md",
    "bash -c 'cat notes.md'",
    "cat src/app.py notes.md",
    "grep -n ERROR big.log | head -20",
)


def make_project(root: Path) -> None:
    """Files of the sizes agents meet: a source file, notes, a log, a minified bundle, a
    one-line JSON document, a SQL dump."""
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text(
        "".join(
            f"def handler_{i}(request):\n    return respond(request, {i})\n\n" for i in range(110)
        )
    )
    (root / "README.md").write_text("".join(f"Line {i} of the readme text.\n" for i in range(100)))
    (root / "notes.md").write_text("".join(f"- note {i:05d}: some text here\n" for i in range(800)))
    (root / "big.log").write_text(
        "".join(
            f"2026-12-01 10:{i // 60 % 60:02d}:{i % 60:02d} INFO req {i} ok\n"
            for i in range(20_000)
        )
    )
    (root / "bundle.min.js").write_text("var a=1;" * 40_000)
    (root / "big.json").write_text('{"rows": [' + ",".join(["12345"] * 55_000) + "]}\n")
    (root / "small.json").write_text(json.dumps({"rows": list(range(2_000))}))
    (root / "dump.sql").write_text("INSERT INTO t VALUES (1, 'some row text here');\n" * 22_000)


class Host(NamedTuple):
    name: str
    output: HostOutput
    header: int
    deny_label: str
    judge: Callable[[str, str], str | None]


def _claude(cap: int | None) -> Host:
    def judge(command: str, cwd: str) -> str | None:
        with _env("BASH_MAX_OUTPUT_LENGTH", None if cap is None else str(cap)):
            return claude_bash.deny_reason(command, cwd)

    with _env("BASH_MAX_OUTPUT_LENGTH", None if cap is None else str(cap)):
        output = claude_bash.host_output()
    return Host(f"Claude Code, cap {output.cap:,}", output, 0, CLAUDE_DENY, judge)


def _codex(model: str) -> Host:
    payload = {"model": model, "session_id": "bench"}

    def judge(command: str, cwd: str) -> str | None:
        return codex_guard.deny_reason(command, cwd, payload)

    output = codex_guard.host_output(model)
    return Host(f"Codex, {model}", output, CODEX_OUTPUT_HEADER_BYTES, CODEX_DENY, judge)


def _gemini_payload(command: str, cwd: str) -> dict[str, object]:
    return {
        "session_id": "bench-gemini",
        "transcript_path": os.path.join(cwd, "gemini-session.jsonl"),
        "cwd": cwd,
        "tool_name": gemini_guard.SHELL_TOOL,
        "tool_input": {"command": command},
    }


def _gemini() -> Host:
    def judge(command: str, cwd: str) -> str | None:
        return gemini_guard.deny_reason(_gemini_payload(command, cwd))

    output = gemini_guard.host_output()
    return Host("Gemini CLI", output, GEMINI_OUTPUT_HEADER_BYTES, GEMINI_DENY, judge)


def _opencode_payload(command: str, cwd: str) -> dict[str, object]:
    return {
        "session_id": "bench-opencode",
        "directory": cwd,
        "tool": opencode_guard.SHELL_TOOL,
        "args": {"command": command},
    }


def _opencode() -> Host:
    def judge(command: str, cwd: str) -> str | None:
        return opencode_guard.deny_reason(_opencode_payload(command, cwd))

    return Host("OpenCode", opencode_guard.HOST_OUTPUT, 0, OPENCODE_DENY, judge)


def _opencode_read(reason: str) -> int | None:
    """The bytes OpenCode's ``read`` returns for the page a reason offers first: each
    line behind its number (``N: ``), in its wrapper."""
    call = re.search(r"the read tool with filePath (.+?), offset (\d+) and limit (\d+)", reason)
    if call is None:
        return None
    first, limit = int(call.group(2)), int(call.group(3))
    lines = Path(call.group(1)).read_bytes().splitlines(keepends=True)[first - 1 :][:limit]
    numbered = sum(len(line) + len(f"{n}: ") for n, line in enumerate(lines, start=first))
    return numbered + OPENCODE_READ_WRAP


@contextmanager
def _env(name: str, value: str | None) -> Iterator[None]:
    before = os.environ.get(name)
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def _run(command: str, cwd: Path) -> int:
    """The bytes ``command`` really prints (stdout and stderr, as the tools return)."""
    done = subprocess.run(
        ["bash", "-c", command], cwd=cwd, capture_output=True, timeout=60, check=False
    )
    return len(done.stdout) + len(done.stderr)


def _read_bytes(path: Path, offset: int, limit: int | None) -> int:
    lines = path.read_bytes().splitlines(keepends=True)[offset - 1 :]
    lines = lines if limit is None else lines[:limit]
    return sum(len(line) + READ_LINE_PREFIX for line in lines)


def _followed(host: Host, reason: str, cwd: Path) -> int:
    """What the model gets when it follows the reason's first suggestion."""
    lines_read = _opencode_read(reason) if host.deny_label == OPENCODE_DENY else None
    if lines_read is not None:
        return lines_read
    read = re.search(r"Read (\{.*?\})", reason)
    shell = re.search(r"Bash (head|tail) -c (\d+) ", reason)
    if read is not None and (shell is None or read.start() < shell.start()):
        call = json.loads(read.group(1))
        return _read_bytes(Path(call["file_path"]), call.get("offset", 1), call.get("limit"))
    if shell is not None:
        return int(shell.group(2))
    page = reason.split("instead: ", 1)[1].split(" (the next page", 1)[0].split(";", 1)[0]
    return host.header + host.output.delivered(_run(page, cwd))


def bash_cases(host: Host, cwd: Path) -> Iterator[tuple[str, int, int]]:
    for command in COMMANDS:
        printed = _run(command, cwd)
        without = host.header + host.output.delivered(printed)
        reason = host.judge(command, str(cwd))
        if reason is None:
            yield command, without, without
            continue
        shown = host.deny_label + reason
        if host.deny_label == CODEX_DENY:
            shown += f". Command: {command}"
        yield command, without, len(shown.encode()) + _followed(host, reason, cwd)


def _transcript(path: Path, context: int) -> None:
    record = {
        "type": "assistant",
        "message": {
            "id": "msg_bench",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": "toolu_bench", "name": "Read", "input": {}}],
            "usage": {
                "input_tokens": 5,
                "cache_creation_input_tokens": 100,
                "cache_read_input_tokens": context - 105,
                "output_tokens": 10,
            },
        },
    }
    path.write_text(json.dumps(record) + "\n")


def _read_result(transcript: Path, path: Path) -> None:
    with transcript.open("a") as handle:
        result = {"type": "user", "toolUseResult": {"file": {"filePath": str(path)}}}
        handle.write(json.dumps(result, separators=(",", ":")))
        handle.write("\n")


def read_cases(cwd: Path) -> Iterator[tuple[str, int, int]]:
    """Claude Code's Read: a 1 MB Read with allow_large, and a file read in full twice."""
    transcript = cwd / "transcript.jsonl"
    _transcript(transcript, 20_000)
    payload: dict[str, object] = {
        "session_id": "bench-session",
        "transcript_path": str(transcript),
        "tool_use_id": "toolu_bench",
    }

    def deliver(path: Path, tool_input: dict[str, object]) -> int:
        size = path.stat().st_size
        if size > CLAUDE_READ_MAX_BYTES and not tool_input.get("allow_large"):
            return 250  # Claude Code's own refusal
        offset = tool_input.get("offset")
        limit = tool_input.get("limit")
        return _read_bytes(
            path,
            offset if isinstance(offset, int) else 1,
            limit if isinstance(limit, int) else None,
        )

    def case(name: str, path: Path, tool_input: dict[str, object]) -> tuple[str, int, int]:
        tool_input = {"file_path": str(path), **tool_input}
        without = deliver(path, tool_input)
        reason = claude_read.deny_reason(tool_input, str(cwd), payload)
        if reason is None:
            _read_result(transcript, path)
            return name, without, without
        read = re.search(r"Read (\{.*?\})", reason)
        followed = 0
        if read is not None:
            call = json.loads(read.group(1))
            followed = _read_bytes(path, call.get("offset", 1), call.get("limit"))
        return name, without, len((CLAUDE_DENY + reason).encode()) + followed

    yield case("Read dump.sql (1 MB, allow_large)", cwd / "dump.sql", {"allow_large": True})
    yield case("Read notes.md", cwd / "notes.md", {})
    yield case("Read notes.md again", cwd / "notes.md", {})
    yield case("Read notes.md again, offset 1", cwd / "notes.md", {"offset": 1})
    yield case("Read notes.md lines 200-260", cwd / "notes.md", {"offset": 200, "limit": 61})


def codex_repeat(host: Host, cwd: Path) -> Iterator[tuple[str, int, int]]:
    """A small file printed whole twice: the second print is a repeat."""
    rollout = cwd / "rollout.jsonl"  # the thread's rollout holds the call that printed it
    output = {"type": "function_call_output", "call_id": "call_bench", "output": "…"}
    line = json.dumps({"type": "response_item", "payload": output}, separators=(",", ":"))
    rollout.write_text(line + "\n")
    payload = {
        "model": "gpt-5",
        "session_id": "bench-codex",
        "cwd": str(cwd),
        "tool_use_id": "call_bench",
        "transcript_path": str(rollout),
    }
    codex_guard.record_printed("cat README.md", str(cwd), payload)
    printed = _run("cat README.md", cwd)
    without = host.header + host.output.delivered(printed)
    reason = codex_guard.deny_reason("cat README.md", str(cwd), payload)
    shown = 0 if reason is None else len(f"{CODEX_DENY}{reason}. Command: cat README.md".encode())
    yield "cat README.md again", without, without if reason is None else shown


def gemini_repeat(host: Host, cwd: Path) -> Iterator[tuple[str, int, int]]:
    """A small file printed whole, then again whole and by a range of it; a log's lines
    printed, then a range inside them: each later print is a repeat."""
    cases = (
        ("cat README.md", "cat README.md", "cat README.md again"),
        ("cat README.md", "sed -n '10,40p' README.md", "sed -n '10,40p' README.md after it"),
        ("sed -n '100,400p' big.log", "sed -n '200,300p' big.log", "a range inside it again"),
    )
    session = cwd / "gemini-session.jsonl"
    header = {"sessionId": "bench-gemini", "projectHash": "0" * 64, "kind": "main"}
    session.write_text(json.dumps(header, separators=(",", ":")) + "\n")
    for n, (first, command, case) in enumerate(cases):
        gemini_guard.record_read(_gemini_payload(first, str(cwd)))
        # the CLI then writes the call's result: what the re-read rule finds in the file
        call = f"run_shell_command_bench_{n}"
        answer = {"id": call, "name": gemini_guard.SHELL_TOOL, "response": {"output": "…"}}
        record = {"id": f"bench-{n}", "type": "user", "content": [{"functionResponse": answer}]}
        with session.open("a") as handle:
            handle.write(json.dumps(record, separators=(",", ":")) + "\n")
        without = host.header + host.output.delivered(_run(command, cwd))
        reason = host.judge(command, str(cwd))
        shown = without if reason is None else len((GEMINI_DENY + reason).encode())
        yield case, without, shown


def opencode_repeat(host: Host, cwd: Path) -> Iterator[tuple[str, int, int]]:
    """A small file printed whole twice: the second print is a repeat."""
    opencode_guard.record_read(_opencode_payload("cat README.md", str(cwd)))
    without = host.header + host.output.delivered(_run("cat README.md", cwd))
    reason = host.judge("cat README.md", str(cwd))
    yield "cat README.md again", without, without if reason is None else len(reason.encode())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], epilog="example: python bench/guard_bytes.py --json"
    )
    parser.add_argument("--json", action="store_true", help="print only JSON")
    args = parser.parse_args(argv)
    if shutil.which("bash") is None:
        sys.stderr.write("guard_bytes bench: bash is needed to run the commands\n")
        return 2
    root = Path(tempfile.mkdtemp(prefix="ctxrelay-guard-bytes-"))
    os.environ["CTXRELAY_STATE_DIR"] = str(root / "state")
    project = root / "project"
    project.mkdir()
    make_project(project)
    hosts = [
        _claude(4_000),
        _claude(None),
        _codex("gpt-5"),
        _codex("gpt-5.5"),
        _gemini(),
        _opencode(),
    ]
    report: dict[str, object] = {}
    ok = True
    for host in hosts:
        cases = list(bash_cases(host, project))
        if host.deny_label == CLAUDE_DENY:
            cases += list(read_cases(project))
            shutil.rmtree(root / "state", ignore_errors=True)  # the next host reads afresh
        elif host.deny_label == GEMINI_DENY:
            cases += list(gemini_repeat(host, project))
        elif host.deny_label == CODEX_DENY:
            cases += list(codex_repeat(host, project))
        elif host.deny_label == OPENCODE_DENY:
            cases += list(opencode_repeat(host, project))
        more = [c for c in cases if c[2] > c[1]]
        total_without = sum(c[1] for c in cases)
        total_with = sum(c[2] for c in cases)
        ok = ok and not more and total_with < total_without
        report[host.name] = {
            "cases": [{"case": c[0], "without": c[1], "with": c[2]} for c in cases],
            "total_without": total_without,
            "total_with": total_with,
            "cases_with_more": [c[0] for c in more],
        }
    shutil.rmtree(root, ignore_errors=True)
    report["meets_target"] = ok
    if args.json:
        print(json.dumps(report))
        return 0 if ok else 1
    names = [h.name for h in hosts]
    rows: dict[str, dict[str, str]] = {}
    totals: list[str] = []
    for name in names:
        data = report[name]
        assert isinstance(data, dict)
        for c in data["cases"]:
            rows.setdefault(c["case"], {})[name] = f"{c['without']:,} -> {c['with']:,}"
        totals.append(f"{data['total_without']:,} -> {data['total_with']:,}")
    width = max(len(case) for case in rows) + 1
    print("bytes the model receives, without the guard -> with it")
    print(" " * width + "".join(f"{n:>24}" for n in names))
    for case, cells in rows.items():
        print(f"{case:<{width}}" + "".join(f"{cells.get(n, '-'):>24}" for n in names))
    print(f"{'total':<{width}}" + "".join(f"{t:>24}" for t in totals))
    print(f"never more on a case, less in total, on every host: {'yes' if ok else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
