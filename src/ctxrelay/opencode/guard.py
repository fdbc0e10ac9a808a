"""The OpenCode guard: the print guard on OpenCode's ``bash`` tool and the re-read guard
on ``bash`` and ``read``.

The command is judged by the core's reading (:func:`ctxrelay.hooks.guard.prints.classify`:
which parts print which file and range, and :mod:`ctxrelay.hooks.guard.output`: how many
bytes). OpenCode 1.18.33 caps a tool's output itself (:data:`HOST_OUTPUT`): a longer
``bash`` output reaches the model as its last 50 KB, the whole saved to a file. So a
print is denied only when the model would get more than
:data:`~ctxrelay.budget.bounds.PRINT_BIG_BYTES` of it, and the reason offers a page of
:data:`~ctxrelay.budget.bounds.PRINT_PAGE_BYTES` bytes (``read`` with ``offset`` and
``limit``, or ``head -c``) and a search. ``read`` is bounded by OpenCode (its first 50 KB
and the ``offset`` to go on from), so only the re-read rule applies to it: a whole print
or read of a file the session already had whole in its current window, unchanged since,
is denied (the record is written once the call ran, at ``tool.execute.after``, and
forgotten at a compaction).

The plugin throws the reason, and the model gets it as the call's result, as it is.
What cannot be judged (a path the shell computes, a file that is not there, a command
that does not parse) is allowed.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping

from ctxrelay.budget.bounds import (
    OPENCODE_OUTPUT_MAX_BYTES,
    PRINT_PAGE_BYTES,
)
from ctxrelay.hooks.guard._model import WHOLE_FILE
from ctxrelay.hooks.guard.output import HostOutput, Sized, printed_bytes, sized
from ctxrelay.hooks.guard.prints import classify
from ctxrelay.hooks.guard.reads import Read, Span, earlier_read, read_when, remember_reads
from ctxrelay.opencode._state import reads_dir

__all__ = ["HOST_OUTPUT", "READ_TOOL", "SHELL_TOOL", "deny_reason", "record_read", "tool_call"]

OUTPUT_MAX_LINES = 2_000
"""OpenCode's other bound of a tool's output: at most this many lines (``read``'s default
``limit``, 1.18.33). A fact of this tool alone, so it lives with its guard."""

SHELL_TOOL = "bash"
READ_TOOL = "read"

HOST_OUTPUT = HostOutput(
    "OpenCode keeps the last 50 KB of a longer output and saves the whole of it to a file",
    OPENCODE_OUTPUT_MAX_BYTES,
    OPENCODE_OUTPUT_MAX_BYTES,
)
"""What OpenCode hands the model of a ``bash`` output (``docs/opencode-facts.md``)."""


def _folder(payload: Mapping[str, object], args: Mapping[str, object]) -> str | None:
    """Where the call runs: its ``workdir`` (absolute, or under the session's folder),
    else the folder OpenCode runs in."""
    directory = payload.get("directory")
    if not isinstance(directory, str) or not os.path.isabs(directory):
        return None
    workdir = args.get("workdir")
    return os.path.join(directory, workdir) if isinstance(workdir, str) and workdir else directory


def _page_lines(path: str) -> int:
    """Whole lines in the first page of ``path``: ``read``'s ``limit`` for a page (0: its
    first line is longer than a page, a minified file's)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(PRINT_PAGE_BYTES).count(b"\n")
    except OSError:
        return 0


def _fits_read(path: str, size: int) -> bool:
    """Whether ``read`` without ``offset``/``limit`` returns the whole file."""
    if size > OPENCODE_OUTPUT_MAX_BYTES:
        return False
    try:
        with open(path, "rb") as handle:
            return handle.read().count(b"\n") <= OUTPUT_MAX_LINES
    except OSError:
        return False


def _read(args: Mapping[str, object], folder: str) -> tuple[Sized, ...]:
    """A ``read`` call as a print: whole when it has no range and OpenCode returns all of
    the file; any other read is a part (``range`` ``None``)."""
    raw = args.get("filePath")
    if not isinstance(raw, str) or not raw:
        return ()
    path = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(folder, raw))
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return ()
    if not os.path.isfile(path):
        return ()
    ranged = args.get("offset") is not None or args.get("limit") is not None
    whole = not ranged and _fits_read(path, st.st_size)
    printed = min(st.st_size, OPENCODE_OUTPUT_MAX_BYTES)
    return (Sized(path, st.st_size, st.st_mtime_ns, WHOLE_FILE if whole else None, printed),)


def tool_call(payload: Mapping[str, object]) -> tuple[str, tuple[Sized, ...]] | None:
    """The tool (``bash`` or ``read``) of a payload and the files it prints; ``None`` for
    any other tool or a payload without what it needs."""
    name, args = payload.get("tool"), payload.get("args")
    if not isinstance(args, dict):
        return None
    folder = _folder(payload, args)
    if folder is None:
        return None
    if name == SHELL_TOOL:
        command = args.get("command")
        if not isinstance(command, str):
            return None
        prints = classify(command, folder)
        return name, sized(prints) if prints else ()
    if name == READ_TOOL:
        return name, _read(args, folder)
    return None


def _big_reason(files: tuple[Sized, ...], total: int) -> str:
    first = next(p for p in files if p.printed)
    path = shlex.quote(first.path)
    page = PRINT_PAGE_BYTES
    lines = _page_lines(first.path)
    shell = f"head -c {page} {path} (the next page: tail -c +{page + 1} {path} | head -c {page})"
    read = f"the read tool with filePath {first.path}, offset 1 and limit {lines}"
    pages = f"{read}, or {shell}" if lines else shell  # a line longer than a page: bytes
    return (
        f"ctxrelay guard: this would print {total:,} bytes of files and you would get "
        f"{HOST_OUTPUT.delivered(total):,} of them ({HOST_OUTPUT.label}). Read a page of "
        f"about {page:,} bytes instead: {pages}; count its lines with wc -l {path}, or "
        f"search it with grep -n PATTERN {path}."
    )


def _repeat_reason(path: str, span: Span, read_at: int) -> str:
    return (
        f"ctxrelay guard: you already read {path} in full {read_when(read_at)}, and it has "
        "not changed since (same size and modification time): its content is still in your "
        "context above. Look there, read a part of it (the read tool with offset and "
        "limit), or search it with grep -n PATTERN."
    )


def _record(payload: Mapping[str, object]) -> str | None:
    session = payload.get("session_id")
    folder = reads_dir(session) if isinstance(session, str) else None
    return None if folder is None else os.path.join(folder, "main.json")


def _reads(files: tuple[Sized, ...]) -> list[Read]:
    """The whole prints and reads of a call, for the re-read rule (whole files only:
    OpenCode's ``read`` numbers its lines from an offset of its own)."""
    return [
        Read(f.path, f.size, f.mtime_ns, (1, -1))
        for f in files
        if f.range is not None and f.range.whole
    ]


def deny_reason(payload: Mapping[str, object]) -> str | None:
    """The reason to deny the payload's tool call, or ``None`` to allow it."""
    call = tool_call(payload)
    if call is None or not call[1]:
        return None
    name, files = call
    if name == SHELL_TOOL:
        total = printed_bytes(files)
        if HOST_OUTPUT.floods(total):
            return _big_reason(files, total)
    record = _record(payload)
    seen = None if record is None else earlier_read(record, _reads(files))
    return None if seen is None else _repeat_reason(*seen)


def record_read(payload: Mapping[str, object]) -> None:
    """After a ``bash`` print or a ``read`` ran: remember each file it had whole."""
    call = tool_call(payload)
    record = _record(payload)
    if call is not None and record is not None:
        remember_reads(record, _reads(call[1]))
