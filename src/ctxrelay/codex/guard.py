"""The Codex guard: the Bash print guard and the re-read guard on Codex's shell tool.

Codex reaches hooks with its shell call renamed to Claude Code's ``tool_name: "Bash"``
and ``tool_input.command``, so the command is judged by the core's reading
(:func:`ctxrelay.hooks.guard.prints.classify`: which parts print which file and range).
What differs is the advice: Codex has no Read tool, its shell is how it reads a file,
and ``sed -n 'A,Bp'`` is how it pages one. So a print is denied only when it would pour
a big file into the context:

- a file over ``CODEX_PRINT_MAX_BYTES`` printed whole, to its end, or by a range of more
  than ``CODEX_PRINT_MAX_LINES`` lines (or more bytes than the first bound);
- a whole print of a file the same agent already printed whole in its current context,
  unchanged since (the re-read rule; the record is written once the print ran, at
  ``PostToolUse``, and forgotten at a compaction).

Codex shows the model ``Command blocked by PreToolUse hook: <reason>. Command: <cmd>``,
so a reason names no command and ends without a period. What cannot be judged (a path
the shell computes, a file that is not there, a command that does not parse) is allowed.
"""

from __future__ import annotations

import glob
import os
import shlex
import shutil
import stat
import time
from collections.abc import Iterator, Mapping
from typing import NamedTuple

from ctxrelay.budget.bounds import CODEX_PRINT_MAX_BYTES, CODEX_PRINT_MAX_LINES
from ctxrelay.codex._state import reads_dir
from ctxrelay.hooks.guard._model import FilePrint, LineRange
from ctxrelay.hooks.guard.prints import classify
from ctxrelay.hooks.guard.reads import load_reads, save_reads
from ctxrelay.hooks.state import is_plain

__all__ = [
    "Printed",
    "deny_reason",
    "forget_reads",
    "printed_files",
    "reads_path",
    "record_printed",
]


class Printed(NamedTuple):
    """One file a command prints, with its size and how much of it."""

    path: str
    size: int
    mtime_ns: int
    range: LineRange | None
    """``None``: the range is known only when the command runs."""


def _files(prints: tuple[FilePrint, ...]) -> Iterator[Printed]:
    for printed in dict.fromkeys(prints):
        for operand in printed.operands:
            if not operand.literal:
                continue  # a path the shell computes: nothing to look at
            paths = [operand.path]
            if operand.glob:
                paths = sorted(glob.glob(operand.path))[:100] or paths
            for path in paths:
                try:
                    st = os.stat(path)
                except (OSError, ValueError):
                    continue
                if not stat.S_ISREG(st.st_mode):
                    continue
                for r in printed.ranges or (None,):
                    yield Printed(path, st.st_size, st.st_mtime_ns, r)


def printed_files(command: str, cwd: str | None) -> tuple[Printed, ...]:
    """The regular files ``command`` prints into the context, as it stands now."""
    prints = classify(command, cwd)
    return tuple(_files(prints)) if prints else ()


def _span(r: LineRange | None) -> int | None:
    """How many lines (or bytes) ``r`` prints whatever the file's length; ``None`` when
    that depends on the file (whole, to the end, all but the last N) or is unknown."""
    if r is None:
        return None
    first, last = r.first, r.last
    if first is None:
        return last if last is not None and last > 0 else None
    if first < 0:
        return -first if last is None else None
    if last is None or last < 0:
        return None
    return max(last - first + 1, 0)


def _too_big(p: Printed) -> bool:
    if p.size <= CODEX_PRINT_MAX_BYTES:
        return False
    span = _span(p.range)
    if span is None:
        return True
    if p.range is not None and p.range.unit == "byte":
        return span > CODEX_PRINT_MAX_BYTES
    return span > CODEX_PRINT_MAX_LINES


def _kib(size: int) -> str:
    return f"{size / 1024:.1f}".removesuffix(".0") + " KiB"


def _big_reason(p: Printed) -> str:
    path = shlex.quote(p.path)
    page = CODEX_PRINT_MAX_LINES
    return (
        f"ctxrelay guard: {p.path} is {_kib(p.size)} ({p.size:,} bytes), more than the "
        f"{_kib(CODEX_PRINT_MAX_BYTES)} a command may print whole into your context. "
        f"Print at most {page} lines at a time (sed -n '1,{page}p' {path}), count its "
        f"lines with wc -l {path}, or search it with rg -n PATTERN {path}"
    )


def _repeat_reason(path: str, read_at: int) -> str:
    minutes = int(time.time() - read_at) // 60
    ago = "less than a minute ago" if minutes < 1 else f"{minutes} min ago"
    stamp = time.strftime("%H:%M:%S UTC", time.gmtime(read_at))
    page = CODEX_PRINT_MAX_LINES
    return (
        f"ctxrelay guard: you already printed {path} in full at {stamp} ({ago}), and it has "
        "not changed since (same size and modification time): its content is still in your "
        f"context above. Look there, print a part of it (sed -n '1,{page}p' "
        f"{shlex.quote(path)}), or search it with rg -n PATTERN"
    )


def _whole(p: Printed) -> bool:
    return p.range is not None and p.range.whole


def deny_reason(command: str, cwd: str | None, payload: Mapping[str, object]) -> str | None:
    """The reason to deny ``command`` on Codex's shell, or ``None`` to allow it."""
    files = printed_files(command, cwd)
    if not files:
        return None
    big = [p for p in files if _too_big(p)]
    if big:
        return "; ".join(dict.fromkeys(_big_reason(p) for p in big))
    record = reads_path(payload)
    if record is None:
        return None
    seen = _load(record)
    for p in files:
        before = seen.get(p.path)
        if _whole(p) and before is not None and before[:2] == [p.size, p.mtime_ns]:
            return _repeat_reason(p.path, int(before[2]))
    return None


def reads_path(payload: Mapping[str, object]) -> str | None:
    """The re-read record of the acting agent (the main thread or a subagent by its
    ``agent_id``) of the payload's session; ``None`` when the ids are not plain."""
    session = payload.get("session_id")
    agent = payload.get("agent_id") or "main"
    if not is_plain(session) or not is_plain(agent):
        return None
    folder = reads_dir(str(session))
    return None if folder is None else os.path.join(folder, f"{agent}.json")


def _load(path: str) -> dict[str, list[int]]:
    """The record's entries of Codex's shape (size, modification time, when printed)."""
    return {
        k: v
        for k, v in load_reads(path).items()
        if isinstance(v, list) and len(v) == 3 and all(isinstance(n, int) for n in v)
    }


def record_printed(command: str, cwd: str | None, payload: Mapping[str, object]) -> None:
    """After ``command`` ran (its output reached the agent): remember each file it
    printed whole, with its size and modification time, for the re-read rule."""
    record = reads_path(payload)
    if record is None:
        return
    whole = [p for p in printed_files(command, cwd) if _whole(p)]
    if not whole:
        return
    files = _load(record)
    now = int(time.time())
    for p in whole:
        files.pop(p.path, None)  # the newest print goes last
        files[p.path] = [p.size, p.mtime_ns, now]
    save_reads(record, files)


def forget_reads(payload: Mapping[str, object]) -> None:
    """After a compaction: what was printed is gone from the context."""
    session = payload.get("session_id")
    folder = reads_dir(session) if isinstance(session, str) else None
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
