"""The files a Claude Code main chain touched: which response called which file tool on
which path, and how many bytes each call's result carried.

The what-if replay reads this to price what a restart it simulates costs beyond the
reload (``docs/analyze.md``, "Re-reads after a restart"): a file the recording still
held in its context and touched again must be read again after a restart the recording
did not make. :class:`Calls` holds the rules; the bill's reader
(:func:`ctxrelay.transcripts._scan.read_raw`) hands it, in the same pass and from the
same decode, every line with a usage object it decodes typed (each line of a response
carries the usage; a line the typed decode refuses gives no calls) and the tool result
lines :class:`Calls` asks for (:attr:`Calls.wanted`): the calls' blocks are decoded only
to the keys below, and a result's content is measured, not built.
"""

from __future__ import annotations

import os
from collections.abc import Mapping  # msgspec reads Touches' annotations at run time
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol

import msgspec

__all__ = [
    "FILE_TOOLS",
    "RESULT",
    "Block",
    "Calls",
    "ToolLine",
    "ToolMessage",
    "Touch",
    "TouchKind",
    "Touches",
    "pack_touches",
    "result_needle",
    "unpack_touches",
]

TouchKind = Literal["read", "write", "other", "command"]
"""What a call did to a file: read it, changed it (an edit or a write, which Claude Code's
tools refuse on a file not read in the conversation), named it otherwise (a search), or
ran a shell command (``command`` holds its text, which may name files)."""

FILE_TOOLS: Mapping[str, TouchKind] = {
    "Read": "read",
    "NotebookRead": "read",
    "Edit": "write",
    "MultiEdit": "write",
    "Write": "write",
    "NotebookEdit": "write",
    "Grep": "other",
    "Glob": "other",
    "Bash": "command",
}
"""Claude Code's file tools and what each does to the file its input names."""


class Touch(NamedTuple):
    """One tool call of a response on one file (or a shell command, ``path`` empty);
    ``result_bytes`` is the size of its result's content as written in the transcript
    (0 when it was not read: see :class:`Touches`)."""

    kind: TouchKind
    path: str
    result_bytes: int
    command: str = ""


@dataclass(frozen=True, slots=True)
class Touches:
    """Per main-chain response (by ``message.id``), its file tool calls in order, and
    how many tool calls of any kind it made (``calls``)."""

    by_response: Mapping[str, tuple[Touch, ...]]
    calls: Mapping[str, int] = field(default_factory=dict)
    results_bytes: Mapping[str, int] = field(default_factory=dict)
    """Per response with several calls, its results' bytes in all, when every one of
    them was found (a one-call response's result sizes are not read: its result is the
    whole of the next request's growth)."""

    def called(self, message_id: str) -> int:
        return self.calls.get(message_id, 0)

    def of(self, message_id: str) -> tuple[Touch, ...]:
        return self.by_response.get(message_id, ())


class _Input(msgspec.Struct):
    command: Any = None
    file_path: Any = None
    notebook_path: Any = None
    path: Any = None


class Block(msgspec.Struct):
    """The keys of a content block the touches read: a call's name and input, a result's
    call id and its content's bytes, undecoded (empty when it has none: a JSON value is
    never empty)."""

    type: Any = None
    id: Any = None
    name: Any = None
    input: _Input | None = None
    tool_use_id: Any = None
    content: msgspec.Raw = msgspec.Raw()


class ToolMessage(Protocol):
    """What the touches read of a line's ``message``."""

    @property
    def id(self) -> Any: ...
    @property
    def content(self) -> list[Block] | str | None: ...


class ToolLine(Protocol):
    """What the touches read of a decoded line (the bill's reader decodes it)."""

    @property
    def type(self) -> Any: ...
    @property
    def isSidechain(self) -> Any: ...
    @property
    def message(self) -> ToolMessage | None: ...


RESULT = b'"tool_result"'
"""Every tool result line has it: a line naming a wanted call without it is none."""


def result_needle(call: str) -> bytes:
    """How a result line names the call it answers, as Claude Code writes its lines
    (``JSON.stringify``'s: no spaces); a progress line names the call too, by another
    key, and is not searched for."""
    return b'"tool_use_id":"' + call.encode() + b'"'


class Calls:
    """The calls of each response, and the sizes of the results the replay needs: those
    of a response with several calls, whose growth the results share (the growth of a
    one-call response is its result's). A result line (most of a transcript's bytes,
    the result twice over) is read only when it answers such a call of the newest
    response (:attr:`wanted`; the next response comes after all its results); a result
    written before the response's second call is not known then, and its size is not
    read."""

    def __init__(self) -> None:
        self.calls: dict[str, list[tuple[str, TouchKind, str, str]]] = {}  # message: calls
        self.results: dict[str, int] = {}  # call id: result bytes
        self.any_calls: dict[str, set[str]] = {}  # message: the ids of its tool calls
        # the result needles of the newest response's calls whose results were not read
        self.wanted: set[bytes] = set()
        self.newest: str | None = None

    def take_calls(self, line: ToolLine) -> None:
        """Take the calls of a response line."""
        blocks = _main_blocks(line, "assistant")
        message_id = line.message.id if blocks and line.message is not None else None
        if not isinstance(message_id, str):
            return
        for block in blocks:
            if block.type != "tool_use":
                continue
            if message_id != self.newest:
                self.newest = message_id
                self.wanted.clear()
            touched = _touch_of(block)
            if touched is not None:
                self.calls.setdefault(message_id, []).append(touched)
            call = block.id
            if isinstance(call, str):  # a block's lines repeat: count each call once
                ids = self.any_calls.setdefault(message_id, set())
                ids.add(call)
                if len(ids) > 1:
                    self._want(ids)

    def take_results(self, line: ToolLine) -> None:
        """Take the results of a line that names a call in :attr:`wanted` and
        :data:`RESULT`."""
        for block in _main_blocks(line, "user"):
            if block.type == "tool_result":
                call = block.tool_use_id
                if isinstance(call, str) and block.content:
                    self.results[call] = len(block.content)
                    self.wanted.discard(result_needle(call))

    def _want(self, ids: set[str]) -> None:
        self.wanted.update(result_needle(c) for c in ids if c not in self.results)

    def touches(self) -> Touches:
        """What the lines taken so far found."""
        results = self.results
        shared = {
            message: sum(results[c] for c in ids)
            for message, ids in self.any_calls.items()
            if len(ids) > 1 and all(c in results for c in ids)
        }
        return Touches(
            {
                message: tuple(
                    Touch(kind, file, results.get(call, 0), command)
                    for call, kind, file, command in calls
                )
                for message, calls in self.calls.items()
            },
            {message: len(calls) for message, calls in self.any_calls.items()},
            shared,
        )


def _main_blocks(line: ToolLine, kind: str) -> list[Block]:
    """The content blocks of a main-chain line of ``kind`` (none when its content is
    text)."""
    message = line.message
    if line.type != kind or line.isSidechain is True or message is None:
        return []
    blocks = message.content
    return blocks if isinstance(blocks, list) else []


def _touch_of(block: Block) -> tuple[str, TouchKind, str, str] | None:
    """``(call id, kind, path, command)`` of a file tool call."""
    name = block.name
    kind = FILE_TOOLS.get(name) if isinstance(name, str) else None
    args = block.input
    call = block.id
    if kind is None or args is None or not isinstance(call, str):
        return None
    if kind == "command":
        command = args.command
        return (call, kind, "", command) if isinstance(command, str) and command else None
    for value in (args.file_path, args.notebook_path, args.path):
        if isinstance(value, str) and value:
            return call, kind, os.path.normpath(value), ""
    return None


_pack = msgspec.msgpack.Encoder().encode
_unpack = msgspec.msgpack.Decoder(Touches).decode


def pack_touches(touches: Touches) -> bytes:
    """``touches`` as one msgpack string: how a read keeps them until a replay asks (a
    session's touches as Python objects are some 3 times its packed bytes, and a run
    holds every session's read at once)."""
    return _pack(touches)


def unpack_touches(data: bytes) -> Touches:
    """The :class:`Touches` :func:`pack_touches` packed."""
    return _unpack(data)
