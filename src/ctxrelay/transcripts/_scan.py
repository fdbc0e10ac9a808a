"""The analyzer's read of one transcript: :func:`read_raw` applies the rules of
:mod:`ctxrelay.transcripts._pass` to a file, and :class:`Transcript` is what it found.

How it reads (``docs/analyze.md``, "How it reads"):

* The file is read in blocks, never whole, into one buffer per file. A byte search over
  each block finds the candidate lines; the other lines are never split out. A line that
  goes on past a block is carried into the next one, up to the line cap
  (:data:`~ctxrelay.budget.bounds.TRANSCRIPT_LINE_MAX_BYTES`): a longer line is dropped
  as it is read and counted in ``long_lines``, so memory stays bounded on any file.
* A line with a usage object is decoded by msgspec, typed, into the keys the rules read
  (:class:`_Line`, its counts whole numbers from 0); the text, most of its bytes, is
  skipped unbuilt. The other
  candidates, a compact summary (its content is read) and whatever the typed decode
  refuses are decoded whole with msgspec, and a line it refuses again with ``json``
  (``NaN``, lone surrogates), so the records are ``json``'s
  (``tests/transcripts/test_fuzz.py`` holds the read to a line-by-line one).
* A session file's tool calls (:class:`~ctxrelay.transcripts._touches.Calls`) come from
  the same search and the same decode: a response's calls are in its lines' content
  blocks, and the few result lines whose sizes are wanted are found by their call's id
  between the candidates (``tests/transcripts/test_touches.py`` holds that to a
  line-by-line read).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

import msgspec

from ctxrelay.budget.bounds import TRANSCRIPT_LINE_MAX_BYTES
from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts._pass import (
    BOUNDARY,
    SUMMARY,
    USAGE,
    Pass,
    RawTranscript,
    RawUsage,
    first_line_problem,
    open_fd,
)
from ctxrelay.transcripts._records import Compaction, Response, Usage
from ctxrelay.transcripts._touches import (
    RESULT,
    Block,
    Calls,
    Touches,
    pack_touches,
)

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
    "read_touches",
    "scan",
    "spans",
    "transcript_of",
]

BLOCK_BYTES = 1024 * 1024
"""How much of a file one read takes (blocks from 64 KiB to 16 MiB read the corpus
equally fast, within the shared machine's noise; ``docs/analyze.md``)."""


_Count = Annotated[int, msgspec.Meta(ge=0)]
"""A token count as the rules read it plainly (:func:`~ctxrelay.transcripts.as_count` of
anything else is decoded whole, and read by the rules)."""


class _Split(msgspec.Struct):
    ephemeral_1h_input_tokens: _Count = 0


class _Usage(msgspec.Struct):
    input_tokens: _Count = 0
    cache_creation_input_tokens: _Count = 0
    cache_read_input_tokens: _Count = 0
    output_tokens: _Count = 0
    cache_creation: _Split | None = None


class _Message(msgspec.Struct):
    """The keys of a ``message`` that :class:`Pass` and the touches read; of its content
    blocks, only the keys of :class:`~ctxrelay.transcripts._touches.Block`."""

    id: Any = None
    model: Any = None
    usage: _Usage | None = None
    content: list[Block] | str | None = None


class _Line(msgspec.Struct):
    """The keys of a line that :class:`Pass` and the touches read. msgspec decodes a line
    into these keys alone, skipping the others without building them (a block's text, a
    call's other input, a result's content: most of a line's bytes), and the counts
    straight into ints."""

    type: Any = None
    sessionId: Any = None
    version: Any = None
    isSidechain: Any = None
    timestamp: Any = None
    agentId: Any = None
    requestId: Any = None
    isCompactSummary: Any = msgspec.UNSET
    message: _Message | None = None


_decode_line = msgspec.json.Decoder(_Line).decode


def _usage(usage: _Usage | None) -> RawUsage | None:
    """:func:`~ctxrelay.transcripts._pass.usage_tuple` of a usage object decoded as
    :class:`_Usage` (``tests/transcripts/test_fuzz.py`` holds the two to one result)."""
    if usage is None:
        return None
    created = usage.cache_creation_input_tokens
    split = usage.cache_creation
    return (
        usage.input_tokens,
        created,
        usage.cache_read_input_tokens,
        usage.output_tokens,
        0 if split is None else min(split.ephemeral_1h_input_tokens, created),
    )


def _take(rules: Pass, line: _Line) -> bool:
    """Hand ``rules`` a response line decoded as :class:`_Line`; False when it is a line
    they read whole (a compact summary, whose content they read; a system line)."""
    kind = line.type
    if kind == "system" or line.isCompactSummary is not msgspec.UNSET:
        return False
    rules.identify(line.sessionId, line.version)
    message = line.message
    if kind == "assistant" and message is not None:
        rules.response(
            message.id,
            message.model,
            _usage(message.usage),
            sidechain=not rules.agent and line.isSidechain is True,
            timestamp=line.timestamp,
            agent_id=line.agentId,
            request_id=line.requestId,
        )
    return True


_decode_whole = msgspec.json.Decoder().decode


def loads(line: bytes | bytearray) -> Any:
    """A line decoded whole: msgspec, or ``json`` for what msgspec refuses (``NaN``, a
    lone surrogate, a number past a float's range). Not orjson: it reads an integer over
    64 bits as a float, where ``json`` keeps it whole."""
    try:
        return _decode_whole(line)
    except msgspec.DecodeError:
        return json.loads(line)


def _fields(line: bytes | bytearray) -> _Line | None:
    """``line`` decoded as :class:`_Line`; ``None`` when msgspec refuses it (a count that
    is not a whole number from 0, ``NaN``, a lone surrogate, a key or a block of another
    type): the rules then read it decoded whole."""
    try:
        return _decode_line(line)
    except (ValueError, RecursionError):
        return None


def _whole(line: bytes | bytearray) -> dict[str, Any] | None:
    """``line`` decoded whole, or ``None`` when it is not a JSON object."""
    try:
        record = loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def _utf8(line: bytes | bytearray) -> bool:
    """Whether ``line`` is UTF-8 (msgspec does not check the strings it skips; json
    refuses them)."""
    if line.isascii():
        return True
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


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
    """One file's read in progress: the rules' state and the counts; ``calls`` (``None``
    when they are not read) takes the session's tool calls from the same lines and the
    same decode, and asks for the result lines it needs."""

    def __init__(self, path: str, agent: bool, calls: Calls | None = None) -> None:
        super().__init__(path)
        self.rules = Pass(agent)
        self.boundary_seen = False
        self.calls = calls

    def lines_of(self, data: bytes | bytearray, lo: int, hi: int, final: bool = False) -> None:
        self.check_start(data, lo, hi)
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
        rules, calls = self.rules, self.calls
        done = lo  # where the lines read so far end
        for start in sorted(found):
            end, usage = found[start]
            if calls is not None and calls.wanted:  # the results before it, or in it
                self._results(calls, data, done, end)
            done = end
            line = data[start:end]
            # found for a boundary's name or a summary mark alone: a summary is read only
            # after a boundary
            if not usage and not (final and end == hi) and not rules.wants(line):
                continue
            self.lines += 1
            if not (line.endswith(b"}") or line.rstrip().endswith(b"}")):
                self.malformed += 1  # a line cut short (the usual malformed line)
                continue
            typed = _fields(line) if usage else None
            if typed is not None:
                if calls is not None:
                    calls.take_calls(typed)
                if not _utf8(line):
                    self.malformed += 1
                    continue
                if _take(rules, typed):
                    continue
            record = _whole(line)
            if record is None:
                self.malformed += 1
                continue
            rules.feed(record)
        if calls is not None and calls.wanted:
            self._results(calls, data, done, hi)

    @staticmethod
    def _results(calls: Calls, data: bytes | bytearray, lo: int, hi: int) -> None:
        """Hand ``calls`` the result lines of ``data[lo:hi]`` that answer a call it
        wants, in order (each line found by the call's id, searched in place)."""
        find, wanted = data.find, calls.wanted
        at = {call: find(call, lo, hi) for call in wanted}  # where each is named next
        while wanted:
            start = min((a for c, a in at.items() if a != -1 and c in wanted), default=-1)
            if start == -1:
                return
            start = max(data.rfind(b"\n", lo, start) + 1, lo)
            end = find(b"\n", start, hi)
            if end == -1:
                end = hi
            if find(RESULT, start, end) != -1:
                record = _fields(data[start:end])
                if record is not None:  # a cut or odd line: the bill's reader reports it
                    calls.take_results(record)
            for call, a in at.items():
                if start <= a < end and call in wanted:
                    at[call] = find(call, end, hi)


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
    touches: bool = False,
) -> RawTranscript:
    """Read a whole transcript once (:class:`~ctxrelay.transcripts._pass.RawTranscript`).
    ``agent=True`` for a subagent's own file; ``line_cap`` is the longest line read;
    ``touches``: read the session's file tool calls in the same pass, packed
    (:func:`~ctxrelay.transcripts._touches.pack_touches`).

    Raises :class:`~ctxrelay.errors.TranscriptError` when the file is missing, is not a
    readable regular file, is empty or is not JSON lines."""
    read = _Read(path, agent, Calls() if touches else None)
    size = read_file(path, read, line_cap)
    raw = read.rules.result(
        path, lines=read.lines, malformed=read.malformed, size=size, long_lines=read.long_lines
    )
    if read.calls is None:
        return raw
    return raw._replace(touches=pack_touches(read.calls.touches()))


def read_touches(
    path: str | os.PathLike[str], line_cap: int = TRANSCRIPT_LINE_MAX_BYTES
) -> Touches:
    """The file tool calls of the main chain of the transcript at ``path`` (a whole
    read of it). Raises :class:`~ctxrelay.errors.TranscriptError` as :func:`read_raw`
    does."""
    read = _Read(os.fspath(path), False, Calls())
    read_file(read.path, read, line_cap)
    return read.calls.touches() if read.calls is not None else Touches({})


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
