"""Memory stays bounded on any input: a 2 GiB file of zeros, or a line far longer than
the line cap, is skipped with one warning, read in blocks and never held whole. Each
case runs in a child process whose peak resident memory is checked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxrelay.budget.bounds import TRANSCRIPT_LINE_MAX_BYTES
from tests.transcripts._lines import assistant, dumps, user

GIB = 1024 * 1024 * 1024
PEAK_MAX = 256 * 1024 * 1024


def _python(args: list[str]) -> tuple[int, str, str]:
    """Run ``python args...``: its exit code, stdout and stderr."""
    with open(os.devnull, "rb") as stdin:
        child = subprocess.Popen(
            [sys.executable, *args],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = child.communicate(timeout=120)
    return child.returncode, out.decode(), err.decode()


def _run_measured(code: str) -> tuple[str, int]:
    """``code`` in a child; its stdout and its peak resident bytes, which the child
    reports as its last line: Linux's ``VmHWM``, the high-water mark of this process's
    own memory (``getrusage``'s ``ru_maxrss`` keeps the parent's across fork and exec),
    and ``ru_maxrss`` elsewhere."""
    probe = code + (
        "\nimport resource, sys\n"
        "try:\n"
        "    with open('/proc/self/status') as f:\n"
        "        peak = next(int(l.split()[1]) * 1024 for l in f if l.startswith('VmHWM:'))\n"
        "except OSError:\n"
        "    scale = 1 if sys.platform == 'darwin' else 1024\n"
        "    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale\n"
        "print(peak)\n"
    )
    code_, out, err = _python(["-c", probe])
    assert code_ == 0, err
    *lines, peak = out.strip().splitlines()
    return "\n".join(lines), int(peak)


def _sparse(path: Path, head: bytes, size: int) -> Path:
    """``head`` followed by zeros up to ``size`` bytes, without writing them (a hole)."""
    with path.open("wb") as f:
        f.write(head)
        f.truncate(size)
    return path


def test_a_2_gib_file_of_zeros_is_skipped_in_bounded_memory(tmp_path: Path) -> None:
    (tmp_path / "projects" / "p").mkdir(parents=True)
    zeros = _sparse(tmp_path / "projects" / "p" / "zeros.jsonl", b"", 2 * GIB)
    good = tmp_path / "projects" / "p" / "good.jsonl"
    good.write_bytes(dumps(user("hi")) + b"\n" + dumps(assistant("m1", read=5)) + b"\n")
    code = (
        "import json, sys\n"
        "from ctxrelay.cli import main\n"
        f"code = main(['analyze', {str(tmp_path / 'projects')!r}, '--json'])\n"
        "assert code == 0, code\n"
    )
    out, peak = _run_measured(code)
    doc = json.loads(out)
    assert [s["requests"] for s in doc["sessions"]] == [1]
    assert doc["skipped"] == [{"path": str(zeros), "reason": "binary data, not JSON lines"}]
    assert peak < PEAK_MAX


def test_the_warning_names_the_path_once(tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    projects.mkdir()
    (projects / "empty.jsonl").write_bytes(b"")
    (projects / "binary.jsonl").write_bytes(b"\x00\x01\x02")
    (projects / "latin1.jsonl").write_bytes(b'{"a":"caf\xe9"}\n')
    locked = projects / "locked.jsonl"
    locked.write_bytes(dumps(user("hi")) + b"\n")
    locked.chmod(0)
    (projects / "loop.jsonl").symlink_to(projects / "loop.jsonl")
    os.mkfifo(projects / "fifo.jsonl")
    code_, _, err = _python(["-m", "ctxrelay", "analyze", str(projects), "--json"])
    assert code_ == 0, err
    lines = err.splitlines()
    names = ["binary", "empty", "fifo", "latin1", "loop"]
    if os.geteuid() != 0:  # root reads a file whatever its mode
        names.insert(3, "locked")
    assert len(lines) == len(names), err
    for name, line in zip(names, lines, strict=True):
        path = str(projects / f"{name}.jsonl")
        assert line.startswith(f"ctxrelay: warning: skipped {path}: "), line
        assert line.count(path) == 1, line


def test_a_long_line_is_skipped_and_reported_with_a_lowered_cap(tmp_path: Path) -> None:
    cap = 1024 * 1024
    path = tmp_path / "long.jsonl"
    with path.open("wb") as f:
        f.write(dumps(assistant("m1", read=5)) + b"\n")
        f.write(b'{"type":"user","message":{"content":"' + b"x" * (64 * cap) + b'"}}\n')
        f.write(dumps(assistant("m2", read=6)) + b"\n")
    code = (
        "from ctxrelay.transcripts._scan import read_raw, transcript_of\n"
        f"t = transcript_of(read_raw({str(path)!r}, line_cap={cap}))\n"
        "print(t.requests, t.long_lines)\n"
    )
    out, peak = _run_measured(code)
    assert out == "2 1"
    assert peak < PEAK_MAX


@pytest.mark.slow
def test_a_2_gib_line_is_skipped_at_the_documented_cap(tmp_path: Path) -> None:
    head = dumps(user("hi")) + b"\n" + dumps(assistant("m1", read=5)) + b'\n{"type":"user"'
    path = _sparse(tmp_path / "t.jsonl", head, 2 * GIB)
    code = (
        "import json\n"
        "from ctxrelay.cli import main\n"
        f"assert main(['analyze', {str(tmp_path)!r}, '--json']) == 0\n"
    )
    out, peak = _run_measured(code)
    doc = json.loads(out)
    assert [s["requests"] for s in doc["sessions"]] == [1]
    mib = TRANSCRIPT_LINE_MAX_BYTES >> 20
    assert doc["skipped"] == [
        {"path": str(path), "reason": f"longer than the line cap of {mib} MiB", "lines": 1}
    ]
    assert peak < PEAK_MAX
