"""The Gemini guard: the print and re-read guards on the Gemini CLI's shell tool
(``run_shell_command``) and the re-read guard on its ``read_file``.

The command is judged by the core's reading (:mod:`ctxrelay.hooks.guard.bounded`: which
regular files it prints, whole or by which range). The bound is the CLI's own: it cuts a
tool output over ``GEMINI_TOOL_OUTPUT_MAX_CHARS`` (40,000 characters) to its first 8,000
and last 32,000 and spills the rest to a file, so a print of a file over
``GEMINI_PRINT_MAX_BYTES`` whole, to its end, or by more than ``GEMINI_PRINT_MAX_LINES``
lines would reach the model with its middle cut out. Such a print is denied before it
runs, with the bounded alternative (``read_file`` with ``start_line``/``end_line``, or
``sed -n``) in the reason.

A whole print (or a whole ``read_file``) of a file the session already read whole in its
current window, unchanged since, is denied too (the re-read rule; the record is written
once the read ran, at ``AfterTool``, and forgotten when the window ends: a clear or a
compression). The CLI shows the model ``Tool execution blocked: <reason>``. What cannot
be judged (a path the shell computes, a file that is not there, a command that does not
parse) is allowed.
"""

from __future__ import annotations

import os
import shlex
import stat
import time
from collections.abc import Mapping

from ctxrelay.budget.bounds import GEMINI_PRINT_MAX_BYTES, GEMINI_PRINT_MAX_LINES
from ctxrelay.gemini._state import forget_reads, reads_dir
from ctxrelay.hooks.guard._model import WHOLE_FILE
from ctxrelay.hooks.guard.bounded import (
    Printed,
    kib,
    printed_files,
    remember_whole,
    seen_whole,
    too_big,
)

__all__ = [
    "READ_TOOL",
    "SHELL_TOOL",
    "deny_reason",
    "forget_reads",
    "record_read",
    "tool_call",
]

SHELL_TOOL = "run_shell_command"
READ_TOOL = "read_file"


def _big_reason(p: Printed) -> str:
    path = shlex.quote(p.path)
    page = GEMINI_PRINT_MAX_LINES
    return (
        f"ctxrelay guard: {p.path} is {kib(p.size)} ({p.size:,} bytes), more than the "
        f"{kib(GEMINI_PRINT_MAX_BYTES)} a command may print whole: the CLI would keep only "
        "the first 8,000 and last 32,000 characters of its output and cut the middle out. "
        f"Read at most {page} lines at a time (read_file with start_line 1 and end_line "
        f"{page}, or sed -n '1,{page}p' {path}), count its lines with wc -l {path}, or "
        f"search it with grep -n PATTERN {path}."
    )


def _repeat_reason(path: str, read_at: int) -> str:
    minutes = int(time.time() - read_at) // 60
    ago = "less than a minute ago" if minutes < 1 else f"{minutes} min ago"
    stamp = time.strftime("%H:%M:%S UTC", time.gmtime(read_at))
    return (
        f"ctxrelay guard: you already read {path} in full at {stamp} ({ago}), and it has "
        "not changed since (same size and modification time): its content is still in your "
        "context above. Look there, read a part of it (read_file with start_line and "
        "end_line), or search it with grep -n PATTERN."
    )


def _read_file(tool_input: Mapping[str, object], cwd: str) -> tuple[Printed, ...]:
    """A ``read_file`` call as a print: the file, whole unless a line range is given."""
    raw = tool_input.get("file_path")
    if not isinstance(raw, str) or not raw:
        return ()
    path = raw if os.path.isabs(raw) else os.path.join(cwd, raw)
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return ()
    if not stat.S_ISREG(st.st_mode):
        return ()
    ranged = tool_input.get("start_line") is not None or tool_input.get("end_line") is not None
    return (
        Printed(os.path.normpath(path), st.st_size, st.st_mtime_ns, None if ranged else WHOLE_FILE),
    )


def tool_call(payload: Mapping[str, object]) -> tuple[str, tuple[Printed, ...]] | None:
    """The tool (shell or ``read_file``) of a payload and the files it prints; ``None``
    for any other tool or a payload without what it needs."""
    name = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    cwd = payload.get("cwd")
    if not isinstance(tool_input, dict) or not isinstance(cwd, str) or not os.path.isabs(cwd):
        return None
    if name == SHELL_TOOL:
        command = tool_input.get("command")
        if not isinstance(command, str):
            return None
        folder = tool_input.get("dir_path")
        where = os.path.join(cwd, folder) if isinstance(folder, str) and folder else cwd
        return name, printed_files(command, where)
    if name == READ_TOOL:
        return name, _read_file(tool_input, cwd)
    return None


def _record(payload: Mapping[str, object]) -> str | None:
    session = payload.get("session_id")
    folder = reads_dir(session) if isinstance(session, str) else None
    return None if folder is None else os.path.join(folder, "main.json")


def deny_reason(payload: Mapping[str, object]) -> str | None:
    """The reason to deny the payload's tool call, or ``None`` to allow it."""
    call = tool_call(payload)
    if call is None or not call[1]:
        return None
    name, files = call
    if name == SHELL_TOOL:
        big = [p for p in files if too_big(p, GEMINI_PRINT_MAX_BYTES, GEMINI_PRINT_MAX_LINES)]
        if big:
            return " ".join(dict.fromkeys(_big_reason(p) for p in big))
    record = _record(payload)
    seen = None if record is None else seen_whole(record, files)
    return None if seen is None else _repeat_reason(*seen)


def record_read(payload: Mapping[str, object]) -> None:
    """After a shell command or ``read_file`` ran: remember each file it read whole."""
    call = tool_call(payload)
    record = _record(payload)
    if call is not None and record is not None:
        remember_whole(record, call[1])
