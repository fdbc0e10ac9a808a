"""The scripted model: steps from a JSON file, one per request (``docs/contracts.md``).

It runs tests and the demo through the same loop code path as a real provider. A step is
``{"text"?, "tool_calls"?: [{"name", "input"}], "input_tokens"?, "delay_s"?}``;
``input_tokens`` is the input usage the model reports for that request (authoritative,
as a real provider's would be). Without it the model counts the request itself, with a
fixed 4 bytes per token over the request's JSON rendering. When the steps run out it
answers "done" with no tool calls.

The step for a request is the loop's ``response_index`` hint (the number of model
responses the session has recorded), so a resumed session continues after the last
recorded response and a request that a crash interrupted gets the same step again.

``log`` (or ``CTXRELAY_SCRIPTED_LOG``) names a file that receives one JSON line per
request received: what tests assert "never a request over the usable limit" on.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxrelay.errors import ConfigError
from ctxrelay.runtime.estimate import request_bytes
from ctxrelay.runtime.model import ModelRequest, ModelResponse, ToolCall, Usage

__all__ = ["SCRIPTED_BYTES_PER_TOKEN", "ScriptedProvider", "ScriptedStep", "load_steps"]

SCRIPTED_BYTES_PER_TOKEN = 4
"""The scripted model's own tokenizer: ceil(bytes / 4) of the request's JSON rendering."""

_STEP_KEYS = frozenset({"text", "tool_calls", "input_tokens", "delay_s"})
DONE_TEXT = "done"


@dataclass(frozen=True, slots=True)
class ScriptedStep:
    text: str = ""
    tool_calls: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    input_tokens: int | None = None
    delay_s: float = 0.0


def _step(raw: Any, where: str) -> ScriptedStep:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be a JSON object")
    unknown = set(raw) - _STEP_KEYS
    if unknown:
        raise ConfigError(
            f"{where} has unknown keys {sorted(unknown)}; allowed: {sorted(_STEP_KEYS)}"
        )
    text = raw.get("text", "")
    if not isinstance(text, str):
        raise ConfigError(f"{where}: text must be a string")
    calls: list[tuple[str, Mapping[str, Any]]] = []
    raw_calls = raw.get("tool_calls", [])
    if not isinstance(raw_calls, list):
        raise ConfigError(f"{where}: tool_calls must be a list")
    for j, call in enumerate(raw_calls):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ConfigError(f"{where}: tool_calls[{j}] needs a string name")
        args = call.get("input", {})
        if not isinstance(args, dict):
            raise ConfigError(f"{where}: tool_calls[{j}].input must be an object")
        if set(call) - {"name", "input"}:
            raise ConfigError(f"{where}: tool_calls[{j}] takes only name and input")
        calls.append((call["name"], args))
    tokens = raw.get("input_tokens")
    if tokens is not None and (
        isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0
    ):
        raise ConfigError(f"{where}: input_tokens must be a whole number, zero or more")
    delay = raw.get("delay_s", 0.0)
    if isinstance(delay, bool) or not isinstance(delay, int | float) or not 0 <= delay <= 3600:
        raise ConfigError(f"{where}: delay_s must be a number of seconds from 0 to 3600")
    return ScriptedStep(text, tuple(calls), tokens, float(delay))


def load_steps(source: Path | str | Sequence[Any]) -> list[ScriptedStep]:
    """Steps from a JSON file path or an already-parsed list, validated."""
    if isinstance(source, Path | str):
        path = Path(source)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"the script {str(path)!r} does not exist") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read the script {str(path)!r}: {exc}") from None
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"the script {str(path)!r} is not valid JSON: {exc.msg} at line {exc.lineno}"
            ) from None
    else:
        raw = list(source)
    if not isinstance(raw, list):
        raise ConfigError("a script must be a JSON list of steps")
    return [_step(item, f"step {i}") for i, item in enumerate(raw)]


class ScriptedProvider:
    """A :class:`~ctxrelay.runtime.model.ModelProvider` that plays back steps."""

    def __init__(
        self,
        steps: Sequence[ScriptedStep],
        *,
        name: str = "scripted",
        log: Path | str | None = None,
    ) -> None:
        self._steps = list(steps)
        self._name = name
        env_log = os.environ.get("CTXRELAY_SCRIPTED_LOG")
        self._log = Path(log) if log is not None else (Path(env_log) if env_log else None)
        self._cursor = 0

    @classmethod
    def from_file(cls, path: Path | str, *, log: Path | str | None = None) -> ScriptedProvider:
        return cls(load_steps(path), name=f"scripted:{path}", log=log)

    @property
    def name(self) -> str:
        return self._name

    @property
    def steps(self) -> Sequence[ScriptedStep]:
        return tuple(self._steps)

    def _record(self, entry: Mapping[str, Any]) -> None:
        if self._log is None:
            return
        line = (json.dumps(entry, sort_keys=True) + "\n").encode("utf-8")
        fd = os.open(self._log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)

    async def complete(
        self, request: ModelRequest, *, on_text: Callable[[str], None] | None = None
    ) -> ModelResponse:
        hint = request.metadata.get("response_index")
        index = hint if isinstance(hint, int) and hint >= 0 else self._cursor
        step = self._steps[index] if index < len(self._steps) else None
        size = request_bytes(request)
        counted = math.ceil(size / SCRIPTED_BYTES_PER_TOKEN)
        reported = step.input_tokens if step and step.input_tokens is not None else counted
        self._record(
            {
                "step": index,
                "session_id": request.metadata.get("session_id"),
                "window": request.metadata.get("window_index"),
                "counted_tokens": counted,
                "bytes": size,
                "loop_bytes": request.metadata.get("request_bytes"),
                "reported_tokens": reported,
                "estimated_tokens": request.metadata.get("estimated_tokens"),
                "usable_limit": request.metadata.get("usable_limit"),
                "tools": [t.name for t in request.tools],
            }
        )
        if step is not None and step.delay_s:
            await asyncio.sleep(step.delay_s)
        if step is None:
            text, calls = DONE_TEXT, []
        else:
            text = step.text
            calls = [
                ToolCall(id=f"call_{index}_{j}", name=name, input=dict(args))
                for j, (name, args) in enumerate(step.tool_calls)
            ]
        if on_text is not None and text:
            on_text(text)
        out_bytes = len(text.encode("utf-8")) + sum(
            len(json.dumps({"name": c.name, "input": c.input}).encode("utf-8")) for c in calls
        )
        self._cursor = index + 1
        return ModelResponse(
            text=text,
            tool_calls=calls,
            usage=Usage(
                input_tokens=reported,
                output_tokens=max(1, math.ceil(out_bytes / SCRIPTED_BYTES_PER_TOKEN)),
            ),
            stop_reason="tool_use" if calls else "end_turn",
            model=self._name,
        )
