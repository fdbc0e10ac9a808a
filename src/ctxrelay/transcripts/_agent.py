"""A subagent's own transcript, read incrementally: turns used, latest context, model,
whether it ended on a tool call, and that response's tool-call ids.

The subagent hook runs after every tool call of every subagent, so reading a transcript
must cost the same at turn 60 of a 100 MB file as at turn 1. Counting turns needs every
response, so the reader keeps a cursor (how far it has read, the counts so far) in a
small cache file the caller names, and reads only what was appended since. The cache is
a hint, not state: a missing, stale or corrupt cursor (a file that shrank or was
replaced) means one full pass, never a wrong answer. It is written without fsync or
lock: two hooks of one agent racing both write a self-consistent cursor, and the loser
only costs a re-read.

The line rules are the shared reader's (:mod:`ctxrelay.transcripts`): one response is
several lines sharing ``message.id``; ``<synthetic>`` responses are no requests; a
compaction boundary clears the context but not the turns.

``os`` and the C JSON codec only: this runs in ``ctxrelay-hook``.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from typing import Any, NamedTuple

from ctxrelay.transcripts._counts import SYNTHETIC_MODEL, context_of
from ctxrelay.transcripts._hot import is_prompt

__all__ = ["AgentReading", "read_agent"]

_RECENT_IDS = 16  # one response's lines are adjacent; 16 ids covers any interleaving seen
_CURSOR_VERSION = 4  # 2: the latest response's tool-call ids; 3: a fork's base; 4: runs
_USER = (b'"type":"user"', b'"type": "user"')  # a user line, as written (or re-encoded)
_CHUNK_BYTES = 1 << 20  # a first pass over a large file stays bounded in memory


class AgentReading(NamedTuple):
    """A subagent's transcript as of now.

    ``turns_used``: model responses (unique ``message.id``) in the agent's current run, as
    Claude Code counts them against ``maxTurns``: from its prompt, or from the message
    that continued it (``SendMessage``, a resume); without the parent's response a
    fork's file starts with. ``context_tokens``:
    context of its latest request; None before the first or after a compaction.
    ``ended_on_tool_call``: its latest response asked for a tool; if it has stopped, it
    stopped without a final report. ``tool_ids``: the ids of that response's tool calls.
    ``fork_base``: for a fork (``subagent_type: "fork"``, whose file starts with a
    ``fork-context-ref`` line and a copy of the parent's response that made the call),
    the context it inherited; None for any other agent.
    """

    turns_used: int
    context_tokens: int | None
    model: str | None
    ended_on_tool_call: bool
    tool_ids: tuple[str, ...] = ()
    fork_base: int | None = None

    @property
    def context_added(self) -> int | None:
        """The context this agent added itself: all of it, or for a fork what came after
        the parent's context it inherited."""
        if self.context_tokens is None or self.fork_base is None:
            return self.context_tokens
        return max(0, self.context_tokens - self.fork_base)


def _empty_cursor() -> dict[str, Any]:
    return {
        "v": _CURSOR_VERSION,
        "offset": 0,
        "turns": 0,
        "recent": [],
        "latest": None,
        "fork": None,  # "pending" after a fork-context-ref line, then the inherited context
    }


def _load_cursor(cache: str | None, st: os.stat_result) -> dict[str, Any]:
    if cache is None:
        return _empty_cursor()
    try:
        with open(cache, encoding="utf-8") as fh:
            cur = json.loads(fh.read())
    except (OSError, ValueError):
        return _empty_cursor()
    ok = (
        isinstance(cur, dict)
        and cur.get("v") == _CURSOR_VERSION
        and cur.get("ino") == st.st_ino
        and cur.get("dev") == st.st_dev
        and isinstance(cur.get("offset"), int)
        and 0 <= cur["offset"] <= st.st_size
        and isinstance(cur.get("turns"), int)
        and isinstance(cur.get("recent"), list)
        and (cur.get("latest") is None or isinstance(cur.get("latest"), dict))
    )
    return cur if ok else _empty_cursor()


def _save_cursor(cache: str, cur: dict[str, Any]) -> None:
    tmp = f"{cache}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(cur, separators=(",", ":")))
        os.replace(tmp, cache)
    except OSError:
        # The cursor is only a speed-up: a read-only state dir costs re-reads, no more.
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _advance(cur: dict[str, Any], line: bytes) -> None:
    """Apply one complete transcript line to the cursor."""
    fork_ref = b'"fork-context-ref"' in line
    # A user line that is no tool result may start a new run (parsed; results are not).
    prompt = b'"tool_result"' not in line and any(u in line for u in _USER)
    if not (fork_ref or prompt) and b'"usage"' not in line and b'"compact_boundary"' not in line:
        return
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return
    if not isinstance(record, dict):
        return
    kind = record.get("type")
    if prompt and (is_prompt(record) or _from_outside(record)):
        # The agent's prompt, or a message that continued it after it had stopped
        # (SendMessage writes {"isMeta": true, "origin": {"kind": "coordinator"}}):
        # Claude Code counts maxTurns per run of the agent's loop, from here. A message
        # that reaches it mid-run (after a tool call) joins the running loop.
        if cur.get("idle", True):
            cur["turns"] = 0
        return
    if fork_ref and kind == "fork-context-ref":
        # A fork (subagent_type "fork") starts from its parent's context: Claude Code
        # copies the parent's response that made the Agent call next, as a reference.
        cur["fork"] = "pending"
        return
    if kind == "system" and record.get("subtype") == "compact_boundary":
        cur["latest"] = None  # the context restarts; the turns keep counting
        return
    if kind != "assistant":
        return
    message = record.get("message")
    if not isinstance(message, dict):
        return
    message_id = message.get("id")
    model = message.get("model")
    context = context_of(message.get("usage"))
    if not isinstance(message_id, str) or not message_id or context is None:
        return
    if model == SYNTHETIC_MODEL:
        return  # made up by Claude Code itself: no request was sent
    content = message.get("content")
    calls = [
        block
        for block in (content if isinstance(content, list) else ())
        if isinstance(block, dict) and block.get("type") == "tool_use"
    ]
    ids = [call["id"] for call in calls if isinstance(call.get("id"), str)]
    tool_call = bool(calls)
    recent: list[str] = cur["recent"]
    latest = cur.get("latest")
    if message_id in recent:
        # Another line of a response already counted (one line per content block).
        if latest is not None and latest.get("id") == message_id:
            latest["tool"] = bool(latest.get("tool")) or tool_call
            cur["idle"] = not latest["tool"]
            latest["tools"] = [*latest.get("tools", ()), *ids][-_RECENT_IDS:]
        return
    recent.append(message_id)
    del recent[:-_RECENT_IDS]
    if cur.get("fork") == "pending":
        cur["fork"] = context  # the parent's response: inherited context, not a turn
    else:
        cur["turns"] += 1
    cur["idle"] = not tool_call
    cur["latest"] = {
        "id": message_id,
        "model": model if isinstance(model, str) else None,
        "ctx": context,
        "tool": tool_call,
        "tools": ids,
    }


def _from_outside(record: dict[str, Any]) -> bool:
    """A message another agent sent this one (Claude Code marks it meta, with its origin)."""
    return (
        record.get("type") == "user"
        and record.get("isMeta") is True
        and isinstance(record.get("origin"), dict)
    )


def read_agent(path: str, cache: str | None = None) -> AgentReading | None:
    """Read a subagent's transcript from where the cursor in ``cache`` stopped.

    ``None`` when the transcript does not exist or is not a regular file. Only complete
    lines are consumed; a truncated last line is read again next time.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):  # a FIFO named by a payload would hang
            return None
        cur = _load_cursor(cache, st)
        start = cur["offset"]
        f.seek(start)
        consumed = 0
        carry = b""
        while True:
            chunk = f.read(_CHUNK_BYTES)
            if not chunk:
                break
            buf = carry + chunk
            end = buf.rfind(b"\n") + 1  # only whole lines; the rest waits for its newline
            for line in buf[:end].split(b"\n"):
                if line:
                    _advance(cur, line)
            consumed += end
            carry = buf[end:]
    if consumed:
        cur.update(offset=start + consumed, ino=st.st_ino, dev=st.st_dev)
        if cache is not None:
            _save_cursor(cache, cur)
    latest = cur.get("latest")
    fork = cur.get("fork")
    base = fork if isinstance(fork, int) and not isinstance(fork, bool) else None
    if latest is None:
        return AgentReading(cur["turns"], None, None, False, fork_base=base)
    ctx = latest.get("ctx")
    model = latest.get("model")
    tools = latest.get("tools")
    return AgentReading(
        cur["turns"],
        ctx if isinstance(ctx, int) else None,
        model if isinstance(model, str) else None,
        bool(latest.get("tool")),
        tuple(t for t in tools if isinstance(t, str)) if isinstance(tools, list) else (),
        fork_base=base,
    )
