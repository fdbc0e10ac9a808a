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

import os
import shlex
import shutil
import time
from collections.abc import Mapping

from ctxrelay.budget.bounds import CODEX_PRINT_MAX_BYTES, CODEX_PRINT_MAX_LINES
from ctxrelay.codex._state import reads_dir
from ctxrelay.hooks.guard.bounded import (
    Printed,
    kib,
    printed_files,
    remember_whole,
    seen_whole,
    too_big,
)
from ctxrelay.hooks.state import is_plain

__all__ = [
    "Printed",
    "deny_reason",
    "forget_reads",
    "printed_files",
    "reads_path",
    "record_printed",
]


def _too_big(p: Printed) -> bool:
    return too_big(p, CODEX_PRINT_MAX_BYTES, CODEX_PRINT_MAX_LINES)


def _big_reason(p: Printed) -> str:
    path = shlex.quote(p.path)
    page = CODEX_PRINT_MAX_LINES
    return (
        f"ctxrelay guard: {p.path} is {kib(p.size)} ({p.size:,} bytes), more than the "
        f"{kib(CODEX_PRINT_MAX_BYTES)} a command may print whole into your context. "
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


def deny_reason(command: str, cwd: str | None, payload: Mapping[str, object]) -> str | None:
    """The reason to deny ``command`` on Codex's shell, or ``None`` to allow it."""
    files = printed_files(command, cwd)
    if not files:
        return None
    big = [p for p in files if _too_big(p)]
    if big:
        return "; ".join(dict.fromkeys(_big_reason(p) for p in big))
    record = reads_path(payload)
    seen = None if record is None else seen_whole(record, files)
    return None if seen is None else _repeat_reason(*seen)


def reads_path(payload: Mapping[str, object]) -> str | None:
    """The re-read record of the acting agent (the main thread or a subagent by its
    ``agent_id``) of the payload's session; ``None`` when the ids are not plain."""
    session = payload.get("session_id")
    agent = payload.get("agent_id") or "main"
    if not is_plain(session) or not is_plain(agent):
        return None
    folder = reads_dir(str(session))
    return None if folder is None else os.path.join(folder, f"{agent}.json")


def record_printed(command: str, cwd: str | None, payload: Mapping[str, object]) -> None:
    """After ``command`` ran (its output reached the agent): remember each file it
    printed whole, with its size and modification time, for the re-read rule."""
    record = reads_path(payload)
    if record is not None:
        remember_whole(record, printed_files(command, cwd))


def forget_reads(payload: Mapping[str, object]) -> None:
    """After a compaction: what was printed is gone from the context."""
    session = payload.get("session_id")
    folder = reads_dir(session) if isinstance(session, str) else None
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
