"""The tool seam: what a tool is, what it gets when it runs, what it returns.

A tool is a name, a description, a JSON schema for its input and an async ``run``. The
loop runs the tool calls of one model response concurrently and records each result as
it settles; ``replay_safe`` says whether a call that a crash interrupted may simply be
run again on resume (reads, atomic writes of the same content, ``new_context``) or must
be reported to the model as interrupted (``bash``: it may have had effects).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ctxrelay.budget import DEFAULT_NOTES_FILE
from ctxrelay.runtime.model import ToolSpec

if TYPE_CHECKING:
    from ctxrelay.store import Store

__all__ = [
    "Tool",
    "ToolContext",
    "ToolResult",
    "ToolSet",
    "approve_all",
    "object_schema",
    "string",
]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool returns: the text the model sees, and whether it is an error.

    ``metadata`` is stored with the ``tool_result`` row (JSON-serialisable). A result
    that is not an error and carries ``"new_context": True`` asks the loop to seal the
    window once the other calls of the batch have settled (the ``new_context`` tool)."""

    content: str
    is_error: bool = False
    metadata: Mapping[str, Any] = field(default_factory=dict)


def string(description: str) -> dict[str, Any]:
    """A string property of a tool's input, with what the model should put in it."""
    return {"type": "string", "description": description}


def object_schema(properties: Mapping[str, Mapping[str, Any]], *required: str) -> dict[str, Any]:
    """A tool's input schema as the model is sent it: an object of ``properties``, the
    ``required`` ones named (the key is left out when none is), no other key allowed."""
    schema: dict[str, Any] = {"type": "object", "properties": dict(properties)}
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = False
    return schema


async def approve_all(description: str) -> bool:
    """The default confirmation: every action is allowed (``--yes``)."""
    return True


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Everything a tool may use while it runs, scoped to one call.

    ``workspace`` is the directory file tools are confined to; ``store`` and
    ``session_id`` let ``session_history`` read (only) this session; ``confirm`` asks
    the user before an action with effects (the CLI plugs in a prompt, or ``--yes``).
    """

    workspace: Path
    store: Store
    session_id: str
    window_id: str
    window_index: int
    call_id: str
    notes_file: str = DEFAULT_NOTES_FILE
    confirm: Callable[[str], Awaitable[bool]] = approve_all


@runtime_checkable
class Tool(Protocol):
    """A tool the model can call. Implementations are usually small frozen classes."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> Mapping[str, Any]:
        """A JSON schema (``type: object``) for the call's input."""
        ...

    @property
    def replay_safe(self) -> bool:
        """Whether a call interrupted by a crash may be run again on resume."""
        ...

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        """Run one call. Expected failures return ``ToolResult(is_error=True)``; an
        exception is caught by the loop and reported to the model as an error."""
        ...


class ToolSet:
    """An ordered set of tools with unique names: what a session offers the model."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"two tools are named {tool.name!r}")
        self._tools[tool.name] = tool

    def without(self, *names: str) -> ToolSet:
        return ToolSet(t for t in self._tools.values() if t.name not in names)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> Sequence[str]:
        return tuple(self._tools)

    def specs(self, *, exclude: Iterable[str] = ()) -> list[ToolSpec]:
        """The provider-neutral specs, in order, without the ``exclude`` names."""
        skip = set(exclude)
        return [
            ToolSpec(t.name, t.description, t.input_schema)
            for t in self._tools.values()
            if t.name not in skip
        ]
