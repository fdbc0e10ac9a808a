"""The analyzer's read of one transcript: :func:`read_raw` applies the rules of
:mod:`ctxrelay.transcripts._pass` to a file, and :class:`Transcript` is what it found.

How it reads (``docs/analyze.md``, "How it reads"):

* The file is read in blocks, never whole, into one buffer per file. A byte search over
  each block finds the candidate lines; the other lines are never split out. A line that
  goes on past a block is carried into the next one, up to the line cap
  (:data:`~ctxrelay.budget.bounds.TRANSCRIPT_LINE_MAX_BYTES`): a longer line is dropped
  as it is read and counted in ``long_lines``, so memory stays bounded on any file.
* A line with a usage object is decoded by msgspec into a ``dict`` of the keys the rules
  read (:class:`_Line`); the content, most of its bytes, is skipped unbuilt. The other
  candidates, a compact summary (its content is read) and whatever msgspec refuses are
  decoded whole with orjson, and a line orjson refuses again with ``json`` (integers
  over 64 bits, ``NaN``, lone surrogates), so the records are ``json``'s
  (``tests/transcripts/test_fuzz.py`` holds the read to a line-by-line one).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict, cast

import msgspec
import orjson

from ctxrelay.budget.bounds import TRANSCRIPT_LINE_MAX_BYTES
from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts._pass import (
    BOUNDARY,
    SUMMARY,
    USAGE,
    Pass,
    RawTranscript,
    first_line_problem,
    open_fd,
)
from ctxrelay.transcripts._records import Compaction, Response, Usage

if TYPE_CHECKING:
    from io import FileIO

__all__ = [
    "BLOCK_BYTES",
    "LineSink",
    "Transcript",
    "loads",
    "read_blocks",
    "read_file",
    "read_raw",
    "scan",
    "spans",
    "transcript_of",
]

BLOCK_BYTES = 1024 * 1024
"""How much of a file one read takes (blocks from 64 KiB to 16 MiB read the corpus
equally fast, within the shared machine's noise; ``docs/analyze.md``)."""


class _Message(TypedDict, total=False):
    """The keys of a ``message`` that :class:`Pass` reads, but for its content."""

    id: Any
    model: Any
    usage: Any


class _Line(TypedDict, total=False):
    """The keys of a line that :class:`Pass` reads, but for ``message.content`` (read
    only for a compact summary's length). msgspec decodes a line into a plain ``dict`` of
    these keys alone, skipping the others without building them (the content is most of
    a response's bytes)."""

    type: Any
    sessionId: Any
    version: Any
    isSidechain: Any
    timestamp: Any
    agentId: Any
    requestId: Any
    subtype: Any
    compactMetadata: Any
    isCompactSummary: Any
    message: _Message | None


_decode_line = msgspec.json.Decoder(_Line).decode


def loads(line: bytes | bytearray) -> Any:
    """A line decoded whole: orjson, or ``json`` for what orjson refuses."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)


def _fields(line: bytes | bytearray) -> dict[str, Any] | None:
    """The record of ``line`` with only the keys :class:`Pass` reads; ``None`` when
    msgspec refuses the line (a value out of its range, ``NaN``, a lone surrogate, a key
    of the wrong type) or it is marked as a compact summary: then it is decoded whole."""
    try:
        record = _decode_line(line)
    except (ValueError, RecursionError):
        return None
    if "isCompactSummary" in record:
        return None
    # msgspec does not check that the strings it skips are UTF-8; json refuses them
    if not line.isascii():
        line.decode("utf-8")
    return cast("dict[str, Any]", record)


def _decoded(line: bytes | bytearray, usage: bool) -> dict[str, Any] | None:
    """The record of ``line``, or ``None`` when it is not a JSON object. ``usage``: the
    line has a usage object (it is most likely a response)."""
    if not (line.endswith(b"}") or line.rstrip().endswith(b"}")):
        return None  # a line cut short (the usual malformed line): nothing to decode
    try:
        record = _fields(line) if usage else None
        if record is None:
            record = loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


class LineSink:
    """What :func:`read_blocks` hands a file's bytes to (one reader per format): the
    counts every reader keeps and its first-line check; :meth:`lines_of` is the format's."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.lines = 0
        self.malformed = 0
        self.long_lines = 0
        self.first_line_checked = False

    def check_first_line(self, line: bytes | bytearray, complete: bool) -> None:
        problem = first_line_problem(line, complete)
        if problem is not None:
            raise TranscriptError(self.path, problem)

    def skipped_long_line(self) -> None:
        self.long_lines += 1
        self.first_line_checked = True  # a long first line was checked by its start

    def check_start(self, data: bytes | bytearray, lo: int, hi: int) -> None:
        """Check the file's first line, once, in the first lines handed over."""
        if not self.first_line_checked:
            self.first_line_checked = True
            newline = data.find(b"\n", lo, hi)
            self.check_first_line(data[lo : hi if newline == -1 else newline], newline != -1)

    def lines_of(self, data: bytes | bytearray, lo: int, hi: int, final: bool = False) -> None:
        """Read the candidate lines of ``data[lo:hi]``, whole lines (``final``: the last
        one is the file's unterminated end)."""
        raise NotImplementedError


def spans(data: bytes | bytearray, needle: bytes, lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each line of ``data[lo:hi]`` that names ``needle``, in order."""
    find, rfind = data.find, data.rfind
    at = find(needle, lo, hi)
    while at != -1:
        start = max(rfind(b"\n", lo, at) + 1, lo)
        end = find(b"\n", at, hi)
        if end == -1:
            end = hi
        yield start, end
        at = find(needle, end, hi)


class _Read(LineSink):
    """One file's read in progress: the rules' state and the counts; ``also`` is another
    format's reader handed the same lines (the file is read once for both)."""

    def __init__(self, path: str, agent: bool, also: LineSink | None = None) -> None:
        super().__init__(path)
        self.rules = Pass(agent)
        self.boundary_seen = False
        self.also = also

    def skipped_long_line(self) -> None:
        super().skipped_long_line()
        if self.also is not None:
            self.also.skipped_long_line()

    def lines_of(self, data: bytes | bytearray, lo: int, hi: int, final: bool = False) -> None:
        self.check_start(data, lo, hi)
        if self.also is not None:
            self.also.lines_of(data, lo, hi, final)
        found: dict[int, tuple[int, bool]] = {}  # start: (end, has a usage object)
        for start, end in spans(data, USAGE, lo, hi):
            found[start] = (end, True)
        boundary = lo if self.boundary_seen else data.find(BOUNDARY, lo, hi)
        if boundary != -1:
            self.boundary_seen = True
            for needle in (BOUNDARY, SUMMARY):
                for start, end in spans(data, needle, boundary, hi):
                    found.setdefault(max(data.rfind(b"\n", lo, start) + 1, lo), (end, False))
        if final:  # the unterminated last line is decoded whatever it holds
            found.setdefault(max(data.rfind(b"\n", lo, hi) + 1, lo), (hi, False))
        rules = self.rules
        for start in sorted(found):
            end, usage = found[start]
            line = data[start:end]
            # found for a boundary's name or a summary mark alone: a summary is read only
            # after a boundary
            if not usage and not (final and end == hi) and not rules.wants(line):
                continue
            self.lines += 1
            record = _decoded(line, usage)
            if record is None:
                self.malformed += 1
                continue
            rules.feed(record)


def read_blocks(read: LineSink, f: FileIO, cap: int, block: int) -> int:
    """Read ``f`` to its end, block by block, handing ``read`` whole lines up to ``cap``
    bytes; returns its size."""
    size = 0
    pending: list[bytes] = []  # the start of a line that goes on past the block
    pending_len = 0
    skipping = False  # inside a line longer than the cap
    # one buffer read into again and again: a fresh block per read costs more than the
    # copy (the new memory is faulted in page by page)
    buffer = bytearray(block)
    while n := f.readinto(buffer):
        chunk = buffer if n == block else buffer[:n]
        if not size:
            newline = chunk.find(b"\n")
            read.check_first_line(chunk[: len(chunk) if newline == -1 else newline], False)
        size += len(chunk)
        lo = 0
        if skipping or pending:
            newline = chunk.find(b"\n")
            if newline == -1:
                if not skipping:
                    pending.append(bytes(chunk))
                    pending_len += len(chunk)
                    if pending_len > cap:
                        pending, pending_len, skipping = [], 0, True
                        read.skipped_long_line()
                continue
            if skipping:
                skipping = False
            elif pending_len + newline > cap:
                read.skipped_long_line()
            else:
                line = b"".join((*pending, chunk[: newline + 1]))
                read.lines_of(line, 0, len(line))
            pending, pending_len = [], 0
            lo = newline + 1
        last = chunk.rfind(b"\n", lo)
        if last != -1:
            read.lines_of(chunk, lo, last + 1)
            lo = last + 1
        if lo < len(chunk):
            pending, pending_len = [bytes(chunk[lo:])], len(chunk) - lo
            if pending_len > cap:
                pending, pending_len, skipping = [], 0, True
                read.skipped_long_line()
    if pending:
        line = b"".join(pending)
        read.lines_of(line, 0, len(line), final=True)
    return size


def read_file(path: str, read: LineSink, line_cap: int) -> int:
    """Hand the whole file at ``path`` to ``read`` (:func:`read_blocks`, in blocks of at
    most ``line_cap`` bytes) and return its size. Raises
    :class:`~ctxrelay.errors.TranscriptError` when the file is missing, is not a readable
    regular file or is empty."""
    fd = open_fd(path)
    if fd is None:
        raise TranscriptError(path, "no such file")
    with open(fd, "rb", buffering=0) as f:
        try:
            size = read_blocks(read, f, line_cap, min(BLOCK_BYTES, line_cap))
        except OSError as exc:
            raise TranscriptError(path, (exc.strerror or str(exc)).lower()) from None
    if size == 0:
        raise TranscriptError(path, "empty")
    return size


def read_raw(
    path: str,
    *,
    agent: bool = False,
    line_cap: int = TRANSCRIPT_LINE_MAX_BYTES,
    also: LineSink | None = None,
) -> RawTranscript:
    """Read a whole transcript once (:class:`~ctxrelay.transcripts._pass.RawTranscript`).
    ``agent=True`` for a subagent's own file; ``line_cap`` is the longest line read;
    ``also`` reads the same lines in the same pass.

    Raises :class:`~ctxrelay.errors.TranscriptError` when the file is missing, is not a
    readable regular file, is empty or is not JSON lines."""
    read = _Read(path, agent, also)
    size = read_file(path, read, line_cap)
    return read.rules.result(
        path, lines=read.lines, malformed=read.malformed, size=size, long_lines=read.long_lines
    )


@dataclass(frozen=True, slots=True)
class Transcript:
    """Everything the analyzer reads from one transcript file.

    ``responses`` is the chain (the main chain of a session file, or every response of a
    subagent file), deduplicated by ``message.id``, in order of first appearance.
    ``sidechain_responses`` are the inline subagent responses of old (< 2.0) session
    files. ``malformed_lines`` counts candidate lines that did not parse (a truncated
    last line is one); ``long_lines`` the lines skipped for being longer than the cap.
    ``synthetic_responses`` counts the responses Claude Code made up itself (model
    ``<synthetic>``: no request was sent, nothing is priced). ``request_ids`` maps a
    response's ``message.id`` to the ``requestId`` of its line, where the line has one
    (the analyzer dedupes responses across files by both).
    """

    path: str
    session_id: str | None
    version: str | None
    responses: tuple[Response, ...]
    sidechain_responses: tuple[Response, ...] = ()
    compactions: tuple[Compaction, ...] = ()
    lines: int = 0
    """The candidate lines decoded (the file's other lines are never split out, so they
    are not counted)."""
    malformed_lines: int = 0
    size_bytes: int = 0
    models: tuple[str, ...] = ()
    synthetic_responses: int = 0
    request_ids: dict[str, str] = field(default_factory=dict, hash=False)
    long_lines: int = 0
    format: str = "claude"
    """Whose file it is: ``"claude"`` (a Claude Code transcript), ``"codex"`` (a Codex
    rollout, read by :mod:`ctxrelay.transcripts._codex`) or ``"opencode"`` (a session of
    OpenCode's database, read by :mod:`ctxrelay.transcripts._opencode`)."""
    cwd: str | None = None
    """A Codex rollout's or an OpenCode session's working directory."""
    parent_id: str | None = None
    """A Codex subagent's parent thread id, or an OpenCode subagent's parent session."""
    recorded_cost_usd: float | None = None
    """What the agent itself recorded as the cost (OpenCode prices each message); ``None``
    where it records none."""
    touches: bytes | None = None
    """A session file's file tool calls, read in the same pass as its responses and
    packed (:func:`~ctxrelay.transcripts.unpack_touches` gives the
    :class:`~ctxrelay.transcripts.Touches`); ``None`` for a subagent's file, a Codex
    rollout, or a transcript read by :func:`read_raw` alone."""

    @property
    def requests(self) -> int:
        return len(self.responses)

    @property
    def usage(self) -> Usage:
        total = Usage()
        for response in self.responses:
            total = total + response.usage
        return total

    @property
    def context_curve(self) -> list[int]:
        return [r.usage.context_tokens for r in self.responses]

    @property
    def peak_context_tokens(self) -> int:
        return max((r.usage.context_tokens for r in self.responses), default=0)

    @property
    def final_context_tokens(self) -> int:
        return self.responses[-1].usage.context_tokens if self.responses else 0

    @property
    def model(self) -> str | None:
        """The model of the latest response."""
        for response in reversed(self.responses):
            if response.model:
                return response.model
        return None


def transcript_of(raw: RawTranscript) -> Transcript:
    """The :class:`Transcript` of :func:`read_raw`'s data."""
    main: list[Response] = []
    side: list[Response] = []
    models: dict[str, None] = {}
    request_ids: dict[str, str] = {}
    for (
        message_id,
        model,
        usage,
        sidechain,
        segment,
        timestamp,
        agent_id,
        request_id,
    ) in raw.responses:
        if request_id:
            request_ids[message_id] = request_id
        response = Response(
            message_id, model, Usage(*usage), sidechain, segment, timestamp, agent_id
        )
        (side if sidechain else main).append(response)
        if model and not sidechain:
            models[model] = None
    return Transcript(
        path=raw.path,
        session_id=raw.session_id,
        version=raw.version,
        responses=tuple(main),
        sidechain_responses=tuple(side),
        compactions=tuple(Compaction(*c) for c in raw.compactions),
        lines=raw.lines,
        malformed_lines=raw.malformed,
        size_bytes=raw.size,
        models=tuple(models),
        synthetic_responses=raw.synthetic,
        request_ids=request_ids,
        long_lines=raw.long_lines,
        touches=raw.touches,
    )


def scan(path: str | os.PathLike[str], *, agent: bool = False) -> Transcript:
    """Read a whole transcript once. ``agent=True`` for a subagent's own file (all of its
    lines are sidechain lines, and all of them are its chain).

    Raises :class:`~ctxrelay.errors.TranscriptError` when the file is missing, is not a
    readable regular file, is empty or is not JSON lines.
    """
    return transcript_of(read_raw(os.fspath(path), agent=agent))
