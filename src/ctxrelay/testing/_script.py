"""What the local servers answer: scripted steps, faults, and the script that hands them out.

A step is one model response (text and/or tool calls, the usage the "model" reports, an
optional delay) or one fault (an HTTP error in the provider's real shape, a truncated or
garbled stream, a stall). Steps come from a list, consumed one per model request, or from
a routing callable that sees the parsed request body: concurrent agents (Claude Code runs
subagents in the background) must be answered by content, not by order.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "DONE_TEXT",
    "Fault",
    "FaultKind",
    "Router",
    "Script",
    "Step",
    "ToolUse",
    "load_steps",
    "route_by_content",
]

# What the server answers when the list of steps runs out (``docs/contracts.md``: "done", no tools).
DONE_TEXT = "done"

FaultKind = Literal["status", "truncate", "garbage", "stall", "stall_mid", "stream_error"]
_FAULT_KINDS: frozenset[str] = frozenset(
    ("status", "truncate", "garbage", "stall", "stall_mid", "stream_error")
)


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One tool call the scripted model makes; ``id`` is generated when empty."""

    name: str
    input: Mapping[str, Any] = field(default_factory=dict)
    id: str = ""


@dataclass(frozen=True, slots=True)
class Fault:
    """A failure the server injects instead of (or in the middle of) a response.

    - ``status``: answer ``status`` with the provider's real error JSON (``retry_after``
      seconds sets ``retry-after``/``retry-after-ms``); 529 is Anthropic's "overloaded".
    - ``truncate``: start the stream, then close the connection mid-body.
    - ``garbage``: start the stream, then send an event whose data is not JSON.
    - ``stall``: send nothing for ``stall_s`` seconds (a client timeout fires first).
    - ``stall_mid``: start the stream, then go silent for ``stall_s`` seconds.
    - ``stream_error``: start the stream, then send the provider's in-stream error event
      (Anthropic ``event: error`` with ``status``'s error type).
    """

    kind: FaultKind = "status"
    status: int = 500
    message: str = ""
    retry_after: float | None = None
    stall_s: float = 30.0
    code: str | None = None
    """OpenAI's ``error.code`` (e.g. ``insufficient_quota``); the status's usual code if unset."""

    @classmethod
    def http(
        cls,
        status: int,
        message: str = "",
        *,
        retry_after: float | None = None,
        code: str | None = None,
    ) -> Fault:
        return cls(
            kind="status", status=status, message=message, retry_after=retry_after, code=code
        )

    @classmethod
    def truncated(cls) -> Fault:
        return cls(kind="truncate")

    @classmethod
    def garbled(cls) -> Fault:
        return cls(kind="garbage")

    @classmethod
    def stall_for(cls, seconds: float, *, mid_stream: bool = False) -> Fault:
        return cls(kind="stall_mid" if mid_stream else "stall", stall_s=seconds)

    @classmethod
    def from_json(cls, raw: Any) -> Fault:
        if isinstance(raw, int) and not isinstance(raw, bool):
            return cls.http(raw)
        if isinstance(raw, str):
            raw = {"kind": raw}
        if not isinstance(raw, Mapping):
            raise ValueError(f"a fault must be a status code, a kind or an object, not {raw!r}")
        kind = str(raw.get("kind", "status"))
        if kind not in _FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; one of {sorted(_FAULT_KINDS)}")
        retry = raw.get("retry_after")
        return cls(
            kind=kind,  # type: ignore[arg-type]
            status=int(raw.get("status", 500)),
            message=str(raw.get("message", "")),
            retry_after=None if retry is None else float(retry),
            stall_s=float(raw.get("stall_s", 30.0)),
            code=None if raw.get("code") is None else str(raw["code"]),
        )


@dataclass(frozen=True, slots=True)
class Step:
    """One scripted model response.

    Usage fields left ``None`` are filled in by the server: input from the request's size
    (about four bytes a token), output from the answer's size, cache fields zero.
    ``stop_reason`` defaults to ``tool_use`` when there are tool calls, else ``end_turn``
    (mapped to ``tool_calls``/``stop`` on the OpenAI wire).
    """

    text: str | None = None
    tool_calls: Sequence[ToolUse] = ()
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    delay_s: float = 0.0
    stop_reason: str | None = None
    fault: Fault | None = None

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Step:
        """Read a step in the scripted format: ``{"text"?, "tool_calls"? | "tool_use"?,
        "input_tokens"?, "usage"? {input_tokens, output_tokens, cache_*}, "delay_s"?,
        "stop_reason"?, "fault"?}``."""
        if not isinstance(raw, Mapping):
            raise ValueError(f"a step must be a JSON object, not {raw!r}")
        usage = raw.get("usage") or {}
        if not isinstance(usage, Mapping):
            raise ValueError("a step's usage must be an object")
        calls_raw = raw.get("tool_calls", raw.get("tool_use")) or []
        calls: list[ToolUse] = []
        for call in calls_raw:
            if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
                raise ValueError(f"a tool call needs a name: {call!r}")
            calls.append(
                ToolUse(
                    name=call["name"], input=dict(call.get("input") or {}), id=call.get("id", "")
                )
            )

        def _int(key: str) -> int | None:
            value = raw.get(key, usage.get(key))
            return None if value is None else int(value)

        text = raw.get("text")
        fault = raw.get("fault")
        return cls(
            text=None if text is None else str(text),
            tool_calls=tuple(calls),
            input_tokens=_int("input_tokens"),
            output_tokens=_int("output_tokens"),
            cache_creation_input_tokens=_int("cache_creation_input_tokens") or 0,
            cache_read_input_tokens=_int("cache_read_input_tokens") or 0,
            delay_s=float(raw.get("delay_s", 0.0)),
            stop_reason=raw.get("stop_reason"),
            fault=None if fault is None else Fault.from_json(fault),
        )


def load_steps(source: str | Path | Iterable[Mapping[str, Any]]) -> list[Step]:
    """Steps from a JSON file (a list of step objects) or from already-parsed objects."""
    if isinstance(source, str | Path):
        data = json.loads(Path(source).read_text(encoding="utf-8"))
        if not isinstance(data, list):
            raise ValueError(f"{source}: a script is a JSON list of steps")
        source = data
    return [Step.from_json(item) for item in source]


Router = Callable[[Mapping[str, Any]], Step | None]
"""Chooses the step for a request from its parsed JSON body; ``None`` falls back to the
next listed step (or "done" when none are left)."""


class Script:
    """Hands out steps to concurrent requests: the router first (if any), then the list in
    order, then ``DONE_TEXT``. Thread-safe; ``served`` counts model requests answered."""

    def __init__(self, steps: Iterable[Step] = (), router: Router | None = None) -> None:
        self._steps = list(steps)
        self._next = 0
        self._router = router
        self._lock = threading.Lock()
        self.served = 0

    @classmethod
    def coerce(cls, source: Script | Router | Iterable[Step] | None) -> Script:
        if source is None:
            return cls()
        if isinstance(source, Script):
            return source
        if callable(source):
            return cls(router=source)
        return cls(steps=source)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._steps) - self._next

    def extend(self, steps: Iterable[Step]) -> None:
        with self._lock:
            self._steps.extend(steps)

    def next_step(self, body: Mapping[str, Any]) -> Step:
        # The router runs outside the lock: it is user code and may block or be slow.
        routed = self._router(body) if self._router is not None else None
        with self._lock:
            self.served += 1
            if routed is not None:
                return routed
            if self._next < len(self._steps):
                step = self._steps[self._next]
                self._next += 1
                return step
        return Step(text=DONE_TEXT)


def route_by_content(routes: Mapping[str, Iterable[Step]], default: Iterable[Step] = ()) -> Router:
    """A router for concurrent agents: a request whose first message contains a key of
    ``routes`` (e.g. a subagent's prompt) gets that key's steps in order; any other
    request gets the ``default`` steps in order. A queue that runs out answers "done".

    Claude Code runs subagents in the background, so the main thread and each subagent
    interleave unpredictably; each keeps its own order here."""
    queues = {key: list(steps) for key, steps in routes.items()}
    rest = list(default)
    lock = threading.Lock()

    def route(body: Mapping[str, Any]) -> Step | None:
        messages = body.get("messages")
        first = (
            json.dumps(messages[0], ensure_ascii=False)
            if isinstance(messages, list) and messages
            else ""
        )
        with lock:
            for key, queue in queues.items():
                if key in first:
                    return queue.pop(0) if queue else Step(text=DONE_TEXT)
            return rest.pop(0) if rest else Step(text=DONE_TEXT)

    return route
