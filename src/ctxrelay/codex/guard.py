"""The Codex guard: the Bash print guard and the re-read guard on Codex's shell tool.

Codex reaches hooks with its shell call renamed to Claude Code's ``tool_name: "Bash"``
and ``tool_input.command``, so the command is judged by the core's reading
(:func:`ctxrelay.hooks.guard.prints.classify`: which parts print which file and range,
and :mod:`ctxrelay.hooks.guard.output`: how many bytes). Codex has no Read tool: its
shell is how it reads a file. Codex cuts a long output in the middle (to 10,000 bytes
for the gpt-5 family, 10,000 tokens for later models: :func:`host_output`), so a print
is denied only when the model would get more than
:data:`~ctxrelay.budget.bounds.PRINT_BIG_BYTES` of it; the reason offers a page counted
in bytes (``head -c``) and ``rg``. And a whole print of a file the same agent already
printed whole in its current context, unchanged since, is denied (the re-read rule; the
record is written once the print ran, at ``PostToolUse``, and forgotten at a compaction;
a print a rewind dropped is not in the thread's history any more, and does not count).

Codex shows the model ``Command blocked by PreToolUse hook: <reason>. Command: <cmd>``,
so a reason names no command and ends without a period. What cannot be judged (a path
the shell computes, a file that is not there, a command that does not parse) is allowed.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping

from ctxrelay.budget.bounds import (
    CODEX_BYTE_CUT_MODELS,
    CODEX_OUTPUT_CUT,
)
from ctxrelay.codex._state import reads_dir
from ctxrelay.hooks.guard.output import HostOutput, Sized, page_reason, printed_bytes, sized
from ctxrelay.hooks.guard.prints import classify
from ctxrelay.hooks.guard.reads import load_reads, read_when, save_reads
from ctxrelay.hooks.state import is_plain
from ctxrelay.transcripts import call_in_rollout

__all__ = [
    "deny_reason",
    "forget_reads",
    "host_output",
    "printed_files",
    "reads_path",
    "record_printed",
]

_BYTES_PER_TOKEN = 4
"""Codex's own estimate when it cuts by tokens."""


def host_output(model: object) -> HostOutput:
    """What Codex 0.171 hands ``model`` of a command output: whole up to its cut, then
    the cut (the head and the tail, the middle gone)."""
    if isinstance(model, str) and model in CODEX_BYTE_CUT_MODELS:
        cut, how = CODEX_OUTPUT_CUT, f"{CODEX_OUTPUT_CUT:,} bytes"
    else:
        cut, how = CODEX_OUTPUT_CUT * _BYTES_PER_TOKEN, f"{CODEX_OUTPUT_CUT:,} tokens"
    label = f"Codex cuts a longer output to about {how}, the middle gone"
    return HostOutput(label, cut, cut)


def printed_files(command: str, cwd: str | None) -> tuple[Sized, ...]:
    """The regular files ``command`` prints into the context, as it stands now."""
    prints = classify(command, cwd)
    return sized(prints) if prints else ()


def _repeat_reason(path: str, read_at: int) -> str:
    return (
        f"ctxrelay guard: you already printed {path} in full {read_when(read_at)}, and it has "
        "not changed since (same size and modification time): its content is still in your "
        "context above. Look there, or search it with rg -n PATTERN"
    )


def _whole(p: Sized) -> bool:
    return p.range is not None and p.range.whole


def deny_reason(command: str, cwd: str | None, payload: Mapping[str, object]) -> str | None:
    """The reason to deny ``command`` on Codex's shell, or ``None`` to allow it."""
    files = printed_files(command, cwd)
    if not files:
        return None
    host = host_output(payload.get("model"))
    total = printed_bytes(files)
    if host.floods(total):
        return page_reason(files, total, host, "rg")
    record = reads_path(payload)
    rollout = payload.get("transcript_path")
    if record is None or not isinstance(rollout, str):
        return None
    seen = _load(record)
    for p in files:
        if not _whole(p):
            continue
        for call, before in seen.get(p.path, {}).items():
            # Still in the context: the same file, and the print is in the thread's
            # history (a rewind goes on in a new rollout that names only the kept turns).
            if before[:2] == [p.size, p.mtime_ns] and call_in_rollout(rollout, call):
                return _repeat_reason(p.path, before[2])
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


def _load(path: str) -> dict[str, dict[str, list[int]]]:
    """The record's entries of Codex's shape, by file and by the call that printed it:
    ``"<path>\\n<call id>": [size, modification time, when printed]``."""
    out: dict[str, dict[str, list[int]]] = {}
    for key, value in load_reads(path).items():
        file, _, call = key.rpartition("\n")
        if file and call and len(value) == 3 and all(isinstance(n, int) for n in value):
            out.setdefault(file, {})[call] = value
    return out


def record_printed(command: str, cwd: str | None, payload: Mapping[str, object]) -> None:
    """After ``command`` ran (its output reached the agent): remember each file it
    printed whole, with its size, its modification time and the call that printed it,
    for the re-read rule."""
    record = reads_path(payload)
    call = payload.get("tool_use_id")
    if record is None or not isinstance(call, str) or not call or "\n" in call:
        return
    whole = [p for p in printed_files(command, cwd) if _whole(p)]
    if not whole:
        return
    files = load_reads(record)
    now = int(time.time())
    for p in whole:
        for key in [k for k in files if k.rpartition("\n")[0] == p.path]:
            del files[key]  # the newest print of a file is the one remembered
        files[f"{p.path}\n{call}"] = [p.size, p.mtime_ns, now]
    save_reads(record, files)


def forget_reads(payload: Mapping[str, object]) -> None:
    """After a compaction: what was printed is gone from the context."""
    session = payload.get("session_id")
    folder = reads_dir(session) if isinstance(session, str) else None
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
