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

import os
import stat

from ctxrelay import _fastjson  # json's C codec without importing json (and re)
from ctxrelay.transcripts._counts import SYNTHETIC_MODEL, context_of

# Annotations only (mypy reads any constant named TYPE_CHECKING as true): ``typing``
# would cost the hook more than reading the transcript.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Self

__all__ = ["AgentReading", "read_agent"]

_RECENT_IDS = 16  # one response's lines are adjacent; 16 ids covers any interleaving seen
_CURSOR_VERSION = 2  # 2: the latest response keeps its tool-call ids
_CHUNK_BYTES = 1 << 20  # a first pass over a large file stays bounded in memory


class AgentReading(tuple[int, int | None, str | None, bool, tuple[str, ...]]):
    """A subagent's transcript as of now: an immutable tuple with named fields (not a
    ``typing.NamedTuple``, whose import the hook would pay for at every tool call).

    ``turns_used``: model responses so far (unique ``message.id``). ``context_tokens``:
    context of its latest request; None before the first or after a compaction.
    ``ended_on_tool_call``: its latest response asked for a tool; if it has stopped, it
    stopped without a final report. ``tool_ids``: the ids of that response's tool calls.
    """

    __slots__ = ()

    def __new__(
        cls,
        turns_used: int,
        context_tokens: int | None,
        model: str | None,
        ended_on_tool_call: bool,
        tool_ids: tuple[str, ...] = (),
    ) -> Self:
        return super().__new__(
            cls, (turns_used, context_tokens, model, ended_on_tool_call, tool_ids)
        )

    @property
    def turns_used(self) -> int:
        return self[0]

    @property
    def context_tokens(self) -> int | None:
        return self[1]

    @property
    def model(self) -> str | None:
        return self[2]

    @property
    def ended_on_tool_call(self) -> bool:
        return self[3]

    @property
    def tool_ids(self) -> tuple[str, ...]:
        return self[4]

    def __repr__(self) -> str:
        return (
            f"AgentReading(turns_used={self[0]!r}, context_tokens={self[1]!r}, "
            f"model={self[2]!r}, ended_on_tool_call={self[3]!r}, tool_ids={self[4]!r})"
        )


def _empty_cursor() -> dict[str, Any]:
    return {"v": _CURSOR_VERSION, "offset": 0, "turns": 0, "recent": [], "latest": None}


def _load_cursor(cache: str | None, st: os.stat_result) -> dict[str, Any]:
    if cache is None:
        return _empty_cursor()
    try:
        with open(cache, encoding="utf-8") as fh:
            cur = _fastjson.loads(fh.read())
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
            fh.write(_fastjson.dumps(cur, separators=(",", ":")))
        os.replace(tmp, cache)
    except OSError:
        # The cursor is only a speed-up: a read-only state dir costs re-reads, no more.
        import contextlib  # only here: the hook's normal path need not import it

        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _advance(cur: dict[str, Any], line: bytes) -> None:
    """Apply one complete transcript line to the cursor."""
    if b'"usage"' not in line and b'"compact_boundary"' not in line:
        return
    try:
        record = _fastjson.loads(line)
    except (ValueError, RecursionError):
        return
    if not isinstance(record, dict):
        return
    kind = record.get("type")
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
            latest["tools"] = [*latest.get("tools", ()), *ids][-_RECENT_IDS:]
        return
    recent.append(message_id)
    del recent[:-_RECENT_IDS]
    cur["turns"] += 1
    cur["latest"] = {
        "id": message_id,
        "model": model if isinstance(model, str) else None,
        "ctx": context,
        "tool": tool_call,
        "tools": ids,
    }


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
    if latest is None:
        return AgentReading(cur["turns"], None, None, False)
    ctx = latest.get("ctx")
    model = latest.get("model")
    tools = latest.get("tools")
    return AgentReading(
        cur["turns"],
        ctx if isinstance(ctx, int) else None,
        model if isinstance(model, str) else None,
        bool(latest.get("tool")),
        tuple(t for t in tools if isinstance(t, str)) if isinstance(tools, list) else (),
    )
