"""Running the tool calls of one model response.

The calls run concurrently and each result is recorded as it settles, so a crash keeps
every result that finished. A call is answered, never run, when there is no such tool,
when the host refuses it (the legacy flush step allows only the notes write), when it is
``new_context`` and the session does not offer it, or when a crash interrupted it and
its tool is not ``replay_safe``. A tool that raises is reported to the model as an
error: a tool's bug must not kill the session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxrelay.runtime.tools import ToolContext, ToolResult, ToolSet
from ctxrelay.store import NewRow, Row

__all__ = ["Call", "Refusal", "interrupted_text", "result_row", "run_call", "run_calls"]

Refusal = Callable[[str, Mapping[str, Any]], str | None]
"""``(name, args) -> reason`` when the host refuses a call in this step, else ``None``."""


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call, as its ``tool_call`` row recorded it."""

    id: str
    name: str
    args: Mapping[str, Any]

    @classmethod
    def of(cls, row: Row) -> Call:
        raw = row.metadata.get("input")
        args: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        return cls(str(row.metadata.get("id", "")), str(row.metadata.get("name", "")), args)


def interrupted_text(name: str) -> str:
    """The result of a call that a crash interrupted and that is not run again (the
    runtime's and every integration's, for a call whose result was lost)."""
    return (
        f"{name} was interrupted by a restart before it finished; check whether "
        "it took effect before calling it again"
    )


async def run_call(
    call: Call,
    context: ToolContext,
    *,
    tools: ToolSet,
    replayed: bool,
    offer_new_context: bool,
    refuse: Refusal | None = None,
) -> ToolResult:
    """Run (or answer) one call. ``replayed``: a crash interrupted it before its result
    was recorded, and this is the resume."""
    name = call.name
    tool = tools.get(name)
    if tool is None:
        return ToolResult(f"there is no tool named {name!r}", is_error=True)
    refused = refuse(name, call.args) if refuse is not None else None
    if refused is not None:
        return ToolResult(refused, is_error=True)
    if name == "new_context" and not offer_new_context:
        return ToolResult(
            "new_context is not available in this session; checkpoint your notes "
            "and keep working: the window rolls over at the hard limit",
            is_error=True,
        )
    if replayed and not tool.replay_safe:
        return ToolResult(interrupted_text(name), is_error=True)
    try:
        return await tool.run(call.args, context)
    except Exception as exc:  # a tool's bug must not kill the session
        return ToolResult(f"{name} failed: {exc}", is_error=True)


def result_row(call: Call, result: ToolResult) -> NewRow:
    """The ``tool_result`` row of ``result``."""
    meta = {
        **dict(result.metadata),
        "tool_call_id": call.id,
        "name": call.name,
        "is_error": result.is_error,
    }
    return NewRow("tool_result", result.content, meta)


async def run_calls(
    calls: Sequence[Row],
    *,
    tools: ToolSet,
    context: Callable[[Call], ToolContext],
    fresh: Collection[str],
    offer_new_context: bool,
    record: Callable[[Call, ToolResult], None],
    refuse: Refusal | None = None,
) -> None:
    """Run ``calls`` concurrently; ``record`` each result as it settles. ``fresh`` are the
    ids of calls the model just made (any other was interrupted by a crash)."""

    async def one(row: Row) -> None:
        call = Call.of(row)
        result = await run_call(
            call,
            context(call),
            tools=tools,
            replayed=call.id not in fresh,
            offer_new_context=offer_new_context,
            refuse=refuse,
        )
        record(call, result)

    await asyncio.gather(*(one(row) for row in calls))
