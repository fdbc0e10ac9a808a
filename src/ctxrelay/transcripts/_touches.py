"""The files a Claude Code main chain touched: which response called which file tool on
which path, and how many bytes each call's result carried.

The what-if replay reads this to price what a restart it simulates costs beyond the
reload (``docs/analyze.md``, "Re-reads after a restart"): a file the recording still
held in its context and touched again must be read again after a restart the recording
did not make. It is a second pass over a file, made only for a session whose replay
restarts somewhere the recording did not, on the block reader and line cap of
:mod:`ctxrelay.transcripts._scan`; it decodes only the lines naming a tool call or its
result, and of those only the keys below (a result's content is measured, not built).
"""

from __future__ import annotations

import os
from collections.abc import Mapping  # msgspec reads Touches' annotations at run time
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypedDict

import msgspec

from ctxrelay.budget.bounds import TRANSCRIPT_LINE_MAX_BYTES
from ctxrelay.transcripts._scan import LineSink, read_file, spans

__all__ = [
    "FILE_TOOLS",
    "Touch",
    "TouchKind",
    "TouchReader",
    "Touches",
    "pack_touches",
    "read_touches",
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

_PATH_KEYS = ("file_path", "notebook_path", "path")


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


class _Input(TypedDict, total=False):
    command: Any
    file_path: Any
    notebook_path: Any
    path: Any


class _Block(TypedDict, total=False):
    type: Any
    id: Any
    name: Any
    input: _Input
    tool_use_id: Any
    content: msgspec.Raw


class _Message(TypedDict, total=False):
    id: Any
    content: list[_Block] | str


class _Line(TypedDict, total=False):
    type: Any
    isSidechain: Any
    message: _Message


_decode = msgspec.json.Decoder(_Line).decode
_NEEDLE = b'"tool_use'  # a call ("tool_use") and a result ("tool_use_id")
_RESULT = b'"tool_result"'


class TouchReader(LineSink):
    """The calls of each response, and the sizes of the results the replay needs: those
    of a response with several calls, whose growth the results share (the growth of a
    one-call response is its result's). A result line (most of a transcript's bytes,
    the result twice over) is decoded only when it answers such a call of the newest
    response (the next response comes after all its results); a result written before
    the response's second call is not known then, and its size is not read."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.calls: dict[str, list[tuple[str, TouchKind, str, str]]] = {}  # message: calls
        self.results: dict[str, int] = {}  # call id: result bytes
        self.any_calls: dict[str, set[str]] = {}  # message: the ids of its tool calls
        self.wanted: set[bytes] = set()  # the newest response's calls, results not read
        self.newest: str | None = None

    def lines_of(self, data: bytes | bytearray, lo: int, hi: int, final: bool = False) -> None:
        self.check_start(data, lo, hi)
        wanted = self.wanted
        find = data.find
        for start, end in spans(data, _NEEDLE, lo, hi):
            # A result line is searched in place for the calls wanted, never copied.
            if find(_RESULT, start, end) != -1 and not (
                wanted and any(find(call, start, end) != -1 for call in wanted)
            ):
                continue
            try:
                line = _decode(data[start:end])
            except (ValueError, RecursionError):
                continue  # a cut or odd line: the bill's reader reports it
            self._take(line)

    def _take(self, line: _Line) -> None:
        message = line.get("message")
        if line.get("isSidechain") is True or not isinstance(message, dict):
            return
        blocks = message.get("content")
        if not isinstance(blocks, list):
            return
        kind = line.get("type")
        for block in blocks:
            if kind == "assistant" and block.get("type") == "tool_use":
                message_id = message.get("id")
                if not isinstance(message_id, str):
                    continue
                if message_id != self.newest:
                    self.newest = message_id
                    self.wanted.clear()
                touched = _touch_of(block)
                if touched is not None:
                    self.calls.setdefault(message_id, []).append(touched)
                call = block.get("id")
                if isinstance(call, str):  # a block's lines repeat: count each call once
                    ids = self.any_calls.setdefault(message_id, set())
                    ids.add(call)
                    if len(ids) > 1:
                        self._want(ids)
            elif kind == "user" and block.get("type") == "tool_result":
                call = block.get("tool_use_id")
                content = block.get("content")
                if isinstance(call, str) and content is not None:
                    self.results[call] = len(content)
                    self.wanted.discard(call.encode())

    def _want(self, ids: set[str]) -> None:
        self.wanted.update(c.encode() for c in ids if c not in self.results)

    def touches(self) -> Touches:
        """What the lines handed over so far found."""
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


def _touch_of(block: _Block) -> tuple[str, TouchKind, str, str] | None:
    """``(call id, kind, path, command)`` of a file tool call."""
    name = block.get("name")
    kind = FILE_TOOLS.get(name) if isinstance(name, str) else None
    args = block.get("input")
    call = block.get("id")
    if kind is None or not isinstance(args, dict) or not isinstance(call, str):
        return None
    if kind == "command":
        command = args.get("command")
        return (call, kind, "", command) if isinstance(command, str) and command else None
    for key in _PATH_KEYS:
        value = args.get(key)
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


def read_touches(
    path: str | os.PathLike[str], line_cap: int = TRANSCRIPT_LINE_MAX_BYTES
) -> Touches:
    """The file tool calls of the main chain of the transcript at ``path``. Raises
    :class:`~ctxrelay.errors.TranscriptError` as the bill's reader does."""
    reading = TouchReader(os.fspath(path))
    read_file(reading.path, reading, line_cap)
    return reading.touches()
