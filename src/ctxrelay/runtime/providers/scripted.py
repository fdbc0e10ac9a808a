"""The scripted model: steps from a JSON file, one per request (``docs/contracts.md``).

It runs tests and the demo through the same loop code path as a real provider. The steps
are the one scripted-model format of ``ctxrelay.testing`` (``Step``, ``load_steps``),
which the local wire servers read too: ``{"text"?, "tool_calls"?: [{"name", "input"}],
"input_tokens"?, "output_tokens"?, "cache_*"?, "delay_s"?, ...}``. ``input_tokens`` is
the input usage the model reports for that request (authoritative, as a real provider's
would be; cache reads and writes are reported beside it). Without it the model counts
the request itself, with a fixed 4 bytes per token over the request's JSON rendering.
When the steps run out it answers ``DONE_TEXT`` ("done") with no tool calls. A ``fault``
step is for the wire servers; this provider refuses a script that holds one.

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
from pathlib import Path
from typing import Any

from ctxrelay.errors import ConfigError
from ctxrelay.runtime.estimate import request_bytes
from ctxrelay.runtime.model import ModelRequest, ModelResponse, ToolCall, Usage
from ctxrelay.testing._script import DONE_TEXT, Step, load_steps

__all__ = ["SCRIPTED_BYTES_PER_TOKEN", "ScriptedProvider", "Step", "create", "load_steps"]

SCRIPTED_BYTES_PER_TOKEN = 4
"""The scripted model's own tokenizer: ceil(bytes / 4) of the request's JSON rendering."""


class ScriptedProvider:
    """A :class:`~ctxrelay.runtime.model.ModelProvider` that plays back steps."""

    def __init__(
        self,
        steps: Sequence[Step],
        *,
        name: str = "scripted",
        log: Path | str | None = None,
    ) -> None:
        for i, step in enumerate(steps):
            if step.fault is not None:
                raise ConfigError(
                    f"step {i} is a fault; faults are injected by the local wire servers "
                    "(ctxrelay.testing), the scripted provider only plays responses"
                )
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
    def steps(self) -> Sequence[Step]:
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
        cache_write = step.cache_creation_input_tokens if step else 0
        cache_read = step.cache_read_input_tokens if step else 0
        if step is not None and step.input_tokens is not None:
            reported = step.input_tokens
        else:  # the request as counted, less what the step says came from the cache
            reported = max(0, counted - cache_write - cache_read)
        self._record(
            {
                "step": index,
                "session_id": request.metadata.get("session_id"),
                "window": request.metadata.get("window_index"),
                "counted_tokens": counted,
                "bytes": size,
                "loop_bytes": request.metadata.get("request_bytes"),
                "reported_tokens": reported + cache_write + cache_read,
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
            text = step.text or ""
            calls = [
                ToolCall(id=call.id or f"call_{index}_{j}", name=call.name, input=dict(call.input))
                for j, call in enumerate(step.tool_calls)
            ]
        if on_text is not None and text:
            on_text(text)
        out_bytes = len(text.encode("utf-8")) + sum(
            len(json.dumps({"name": c.name, "input": c.input}).encode("utf-8")) for c in calls
        )
        self._cursor = index + 1
        output = step.output_tokens if step is not None else None
        stop = step.stop_reason if step is not None else None
        return ModelResponse(
            text=text,
            tool_calls=calls,
            usage=Usage(
                input_tokens=reported,
                output_tokens=(
                    output
                    if output is not None
                    else max(1, math.ceil(out_bytes / SCRIPTED_BYTES_PER_TOKEN))
                ),
                cache_creation_input_tokens=cache_write,
                cache_read_input_tokens=cache_read,
            ),
            stop_reason=stop or ("tool_use" if calls else "end_turn"),
            model=self._name,
        )


def create(model: str, **options: Any) -> ScriptedProvider:
    """The provider for ``scripted:PATH`` (the seam of ``ctxrelay.runtime.providers``):
    the steps of the file at ``PATH``; ``log`` is its one option."""
    log = options.pop("log", None)
    if options:
        raise ConfigError(f"the scripted model takes no options {sorted(options)}")
    return ScriptedProvider.from_file(model, log=log)
