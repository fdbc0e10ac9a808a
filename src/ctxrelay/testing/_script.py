"""The scripted model's steps, and the script that hands them out to the local servers.

A step is one model response (text and/or tool calls, the usage the "model" reports, an
optional delay) or one fault (an HTTP error in the provider's real shape, a truncated or
garbled stream, a stall). This is the one step format: the local wire servers here and
the runtime's scripted provider (``scripted:steps.json``) both read it with
:func:`load_steps`, and both answer ``DONE_TEXT`` with no tool calls when the steps run
out. In JSON a step is::

    {"text"?, "tool_calls"? | "tool_use"?: [{"name", "input"?, "id"?}],
     "input_tokens"?, "output_tokens"?, "cache_creation_input_tokens"?,
     "cache_read_input_tokens"?, "reasoning_tokens"?, "usage"?: {the same five counts},
     "delay_s"?, "stop_reason"?, "fault"?}

Steps come from a list, consumed one per model request, or from a routing callable that
sees the parsed request body: concurrent agents (Claude Code runs subagents in the
background) must be answered by content, not by order.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ctxrelay.errors import ConfigError

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

DONE_TEXT = "done"
"""What the scripted model answers, with no tool calls, when its steps run out."""

_COUNTS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "reasoning_tokens",
)
_STEP_KEYS = frozenset(
    {"text", "tool_calls", "tool_use", "usage", "delay_s", "stop_reason", "fault", *_COUNTS}
)
_MAX_DELAY_S = 3600

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
            raise ConfigError(f"a fault must be a status code, a kind or an object, not {raw!r}")
        kind = str(raw.get("kind", "status"))
        if kind not in _FAULT_KINDS:
            raise ConfigError(f"unknown fault kind {kind!r}; one of {sorted(_FAULT_KINDS)}")
        retry = raw.get("retry_after")
        try:
            return cls(
                kind=kind,  # type: ignore[arg-type]
                status=int(raw.get("status", 500)),
                message=str(raw.get("message", "")),
                retry_after=None if retry is None else float(retry),
                stall_s=float(raw.get("stall_s", 30.0)),
                code=None if raw.get("code") is None else str(raw["code"]),
            )
        except (TypeError, ValueError):
            raise ConfigError(
                f"a fault's status, retry_after and stall_s are numbers: {raw!r}"
            ) from None


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
    reasoning_tokens: int = 0
    """Thinking tokens, billed as output (the Gemini wire's ``thoughtsTokenCount``)."""
    delay_s: float = 0.0
    stop_reason: str | None = None
    fault: Fault | None = None

    @classmethod
    def from_json(cls, raw: Any, where: str = "a step") -> Step:
        """Read and check one step of the JSON format above; a bad step is one
        ``ConfigError`` naming ``where`` and what is wrong."""
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{where} must be a JSON object, not {raw!r}")
        unknown = set(raw) - _STEP_KEYS
        if unknown:
            raise ConfigError(
                f"{where} has unknown keys {sorted(unknown)}; allowed: {sorted(_STEP_KEYS)}"
            )
        usage = raw.get("usage", {})
        if not isinstance(usage, Mapping) or set(usage) - set(_COUNTS):
            raise ConfigError(f"{where}: usage must be an object of {', '.join(_COUNTS)}")
        text = raw.get("text")
        if text is not None and not isinstance(text, str):
            raise ConfigError(f"{where}: text must be a string")
        calls_raw = raw.get("tool_calls", raw.get("tool_use"))
        if calls_raw is None:
            calls_raw = []
        if not isinstance(calls_raw, list):
            raise ConfigError(f"{where}: tool_calls must be a list")
        calls = tuple(
            _tool_use(call, f"{where}: tool_calls[{j}]") for j, call in enumerate(calls_raw)
        )
        counts: dict[str, int | None] = {}
        for key in _COUNTS:
            value = raw.get(key, usage.get(key))
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 0
            ):
                raise ConfigError(f"{where}: {key} must be a whole number, zero or more")
            counts[key] = value
        delay = raw.get("delay_s", 0.0)
        if (
            isinstance(delay, bool)
            or not isinstance(delay, int | float)
            or not 0 <= delay <= _MAX_DELAY_S
        ):
            raise ConfigError(f"{where}: delay_s must be a number of seconds from 0 to 3600")
        stop = raw.get("stop_reason")
        if stop is not None and not isinstance(stop, str):
            raise ConfigError(f"{where}: stop_reason must be a string")
        fault = raw.get("fault")
        return cls(
            text=text,
            tool_calls=calls,
            input_tokens=counts["input_tokens"],
            output_tokens=counts["output_tokens"],
            cache_creation_input_tokens=counts["cache_creation_input_tokens"] or 0,
            cache_read_input_tokens=counts["cache_read_input_tokens"] or 0,
            reasoning_tokens=counts["reasoning_tokens"] or 0,
            delay_s=float(delay),
            stop_reason=stop,
            fault=None if fault is None else Fault.from_json(fault),
        )


def _tool_use(raw: Any, where: str) -> ToolUse:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str):
        raise ConfigError(f"{where} needs a string name")
    if set(raw) - {"name", "input", "id"}:
        raise ConfigError(f"{where} takes only name, input and id")
    args = raw.get("input", {})
    if not isinstance(args, Mapping):
        raise ConfigError(f"{where}: input must be an object")
    call_id = raw.get("id", "")
    if not isinstance(call_id, str):
        raise ConfigError(f"{where}: id must be a string")
    return ToolUse(name=raw["name"], input=dict(args), id=call_id)


def load_steps(source: str | Path | Iterable[Any]) -> list[Step]:
    """Steps from a JSON file (a list of step objects) or from already-parsed objects,
    checked: a bad file or step is one ``ConfigError`` that says what is wrong."""
    if isinstance(source, str | Path):
        path = Path(source)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"the script {str(path)!r} does not exist") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read the script {str(path)!r}: {exc}") from None
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"the script {str(path)!r} is not valid JSON: {exc.msg} at line {exc.lineno}"
            ) from None
        if not isinstance(data, list):
            raise ConfigError(f"the script {str(path)!r} must be a JSON list of steps")
        source = data
    elif isinstance(source, Mapping):
        raise ConfigError("a script must be a JSON list of steps")
    return [
        item if isinstance(item, Step) else Step.from_json(item, f"step {i}")
        for i, item in enumerate(source)
    ]


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


def _first_message(body: Mapping[str, Any]) -> str:
    """A request's first message as text to search (see :func:`route_by_content`)."""
    messages = body.get("messages", body.get("input", body.get("contents")))
    if isinstance(messages, str):
        return messages
    if isinstance(messages, list) and messages:
        return json.dumps(messages[0], ensure_ascii=False)
    return ""


def route_by_content(routes: Mapping[str, Iterable[Step]], default: Iterable[Step] = ()) -> Router:
    """A router for concurrent agents: a request whose first message contains a key of
    ``routes`` (e.g. a subagent's prompt) gets that key's steps in order; any other
    request gets the ``default`` steps in order. A queue that runs out answers "done".
    The first message is ``messages[0]`` (Anthropic, Chat Completions), the first item
    of a Responses request's ``input`` (its ``input`` itself when that is a string), or
    a Gemini request's ``contents[0]``.

    Claude Code runs subagents in the background, so the main thread and each subagent
    interleave unpredictably; each keeps its own order here."""
    queues = {key: list(steps) for key, steps in routes.items()}
    rest = list(default)
    lock = threading.Lock()

    def route(body: Mapping[str, Any]) -> Step | None:
        first = _first_message(body)
        with lock:
            for key, queue in queues.items():
                if key in first:
                    return queue.pop(0) if queue else Step(text=DONE_TEXT)
            return rest.pop(0) if rest else Step(text=DONE_TEXT)

    return route
