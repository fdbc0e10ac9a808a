"""The items a framework hands the relay, as the relay sees them: the codec that
keys, describes, measures and builds them, the rows they are stored as, and the
helpers that size a request. Nothing here imports a framework."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, overload

from ctxrelay.runtime.tools.context import NewContext
from ctxrelay.store import (
    Row,
    RowKind,
)

Item = Any
"""One framework item (a message, a tool call, a tool result), as the framework holds it."""


@dataclass(frozen=True, slots=True)
class ItemRow:
    """How one framework item is stored: the row kind and text ctxrelay shows, and for
    tool calls and results the call id and tool name."""

    kind: RowKind
    text: str
    call_id: str | None = None
    name: str | None = None
    arguments: Mapping[str, Any] | None = None
    system: bool = False
    """The item carries the framework's standing instructions (a system message)."""


class Codec(Protocol):
    """What an integration tells the relay about its framework's items."""

    def key(self, item: Item) -> str:
        """A key equal for the same item however the framework hands it back (for
        example after its own session memory stored and reloaded it)."""
        ...

    def describe(self, item: Item) -> Sequence[ItemRow]:
        """The rows this item is stored as: one, or one per part of a message that holds
        several (a reply's text and its tool calls; several tool results)."""
        ...

    def dump(self, item: Item) -> Any:
        """The item as JSON (stored in the row, and measured as the request's bytes)."""
        ...

    def load(self, raw: Any) -> Item:
        """An item from its stored JSON."""
        ...

    def text_message(self, texts: Sequence[str]) -> Item:
        """A user message made of these text parts (lead-ins, advisories, triggers)."""
        ...

    def tool_output(self, call_id: str, name: str, text: str) -> Item:
        """The result item of a tool call (for a call a restart interrupted)."""
        ...


@dataclass(frozen=True, slots=True)
class Conversation:
    """The framework's key of a run's conversation, as an integration reads it."""

    key: str
    """As the framework spells it (``conversation_id='…'``)."""
    carried: bool
    """The run was given the framework's memory of it (its messages, a session)."""
    fresh: str = ""
    """When not ``carried``: how the framework began it anew, and how to continue the
    held one instead (for the error)."""


@dataclass(frozen=True, slots=True)
class SentRequest:
    """What :meth:`Relay.prepare` decided to send."""

    items: list[Item]
    tokens: int
    request_bytes: int
    window_index: int


_TEXT_KINDS = frozenset({"lead_in", "warning", "user"})


def _last_response_at(rows: Sequence[Row]) -> int:
    """The index of the last response row of ``rows`` (``-1``: none), found from the end:
    what follows it is the current step's."""
    for i in range(len(rows) - 1, -1, -1):
        if rows[i].kind == "assistant":
            return i
    return -1


def _size(value: Any) -> int:
    """The size in bytes of ``value`` as compact JSON (how a request's items are measured)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _list_size(sizes: Sequence[int]) -> int:
    """:func:`_size` of a list whose items' sizes are ``sizes``: ``[`` ``,`` ``]``."""
    return sum(sizes) + max(len(sizes) - 1, 0) + 2


_T = TypeVar("_T")


class _Lazy(Sequence[_T]):
    """``items`` seen through ``f``, each computed when read (the reconciliation reads
    the newest few)."""

    def __init__(self, items: Sequence[Item], f: Callable[[Item], _T]) -> None:
        self._items = items
        self._f = f

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, i: int) -> _T: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[_T]: ...
    def __getitem__(self, i: int | slice) -> _T | Sequence[_T]:
        if isinstance(i, slice):
            return [self._f(x) for x in self._items[i]]
        return self._f(self._items[i])


NEW_CONTEXT = NewContext().name
NEW_CONTEXT_DESCRIPTION = NewContext().description
_SEALING_KEY = "new_context"
"""The session metadata key that holds the last :class:`Sealing` (durable, so a process
that resumes after the tool ran still seals the window the agent asked to seal)."""


@dataclass(frozen=True, slots=True)
class Sealing:
    """``new_context``'s outcome when it succeeded: the window it ran in seals before the
    next model call. ``call_id`` is the framework's id of the call (``""`` when the
    framework gives its tools none: then the ``new_context`` result of that window's
    step)."""

    window: int
    call_id: str

    def seals(self, window: int, name: str, call_id: str | None) -> bool:
        """Whether a tool result (of the tool ``name``, answering ``call_id``, recorded in
        ``window``) is the result of this successful call."""
        if name != NEW_CONTEXT or window != self.window:
            return False
        return not self.call_id or self.call_id == (call_id or "")

    def dump(self) -> dict[str, Any]:
        return {"window": self.window, "call_id": self.call_id}

    @classmethod
    def load(cls, raw: object) -> Sealing | None:
        """The outcome stored as :meth:`dump` (``None``: none, or not one)."""
        if not isinstance(raw, Mapping):
            return None
        window, call_id = raw.get("window"), raw.get("call_id")
        if isinstance(window, int) and isinstance(call_id, str):
            return cls(window, call_id)
        return None


_INSTRUCTIONS_LOST = (
    "the window just sealed held the agent's instructions as a message (pydantic-ai's "
    "system_prompt=, a LangChain SystemMessage in the input, a system or developer input "
    "item), and the next window does not send it: ctxrelay sends the open window only. "
    "Give standing instructions where the framework sends them with every request: "
    "pydantic-ai Agent(instructions=...), LangChain create_agent(system_prompt=...), "
    "the Agents SDK's Agent(instructions=...)"
)
_NOT_OFFERED = (
    "new_context is not available in this session; checkpoint your notes and keep "
    "working: the window rolls over at the hard limit"
)
