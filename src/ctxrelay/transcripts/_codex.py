"""The analyzer's read of a Codex rollout (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``):
every model response with its model, tokens and time, and the compactions.

The rules (``docs/codex-facts.md``, "The rollout file"; ``docs/analyze.md``, "Codex"):

* Each line is ``{"timestamp", "ordinal", "type", "payload"}`` (older rollouts, and
  the ones ccusage's loader tests write, have no ``ordinal``). The first line must be a
  JSON object, as for a Claude Code transcript (otherwise the file is skipped whole);
  it need not be the ``session_meta`` (:func:`file_shape` tells the format by the
  line's keys).
* ``session_meta`` (once, usually first; some rollouts have none): the thread id, the
  working directory, the CLI version, and for a subagent its parent thread
  (``parent_thread_id``, or ``source.subagent.thread_spawn.parent_thread_id``).
* ``turn_context``: the model of every response after it, until the next one (its
  ``model``, or ``info.model`` / ``model_name`` / ``metadata.model``, as ccusage reads it;
  a ``token_count`` naming a model sets it too). A rollout that names no model at all
  (Codex builds of early September 2025) is priced as :data:`LEGACY_MODEL`, as ccusage
  prices it.
* ``token_usage_record``: one per model response, counted once per ``response_id`` (a
  repeat is counted in ``duplicate_responses`` and left out). Its ``usage`` holds
  ``input_tokens`` (the cached part included), ``cached_input_tokens``,
  ``output_tokens`` (reasoning included) and ``reasoning_output_tokens``. The
  ``token_count`` events are not summed beside them (one was seen written twice).
* A rollout with no ``token_usage_record`` at all (Codex before it wrote them) is
  counted from its ``token_count`` events instead: each one whose ``total_token_usage``
  changed is a response of its ``last_token_usage`` (a repeat, and the zeros written
  after a compaction, change no total); an event with a total and no last counts the
  difference from the previous total, one with a last and no total counts that last,
  and one with no time counts nowhere. This is how ccusage counts every rollout.
* ``compacted``: a compaction; the chain after it is a new segment.

It reads as the Claude Code reader does (:mod:`ctxrelay.transcripts._scan`): in blocks,
lines over the cap skipped and counted, only the lines that name one of those types
decoded (msgspec into the keys read, whole or with ``json`` when that refuses), a line
that does not decode counted as malformed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypeAlias, TypedDict

import msgspec

from ctxrelay.budget.bounds import TRANSCRIPT_LINE_MAX_BYTES
from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts._codex_tail import (
    COMPACTED,
    TOKEN_COUNT,
    TURN_CONTEXT,
    USAGE_RECORD,
    codex_counts,
)
from ctxrelay.transcripts._pass import open_fd
from ctxrelay.transcripts._records import Compaction, Response, Usage
from ctxrelay.transcripts._scan import LineSink, Transcript, loads, read_file, spans

__all__ = [
    "LEGACY_MODEL",
    "CodexPass",
    "CodexResponse",
    "RawRollout",
    "Rollout",
    "codex_place",
    "file_shape",
    "is_candidate",
    "is_rollout",
    "read_rollout",
    "read_rollout_raw",
    "rollout_of",
]

_META = b'"session_meta"'
_HEAD_BYTES = 16384

LEGACY_MODEL = "gpt-5"
"""The model of a rollout that names none (ccusage's fallback for the Codex builds of
early September 2025, whose default model it was)."""

RawCodexEntry: TypeAlias = tuple[str, str | None, int, int, int, int, int, str | None]
RawCodexCompaction: TypeAlias = tuple[int | None, int, int, str | None]


class RawRollout(NamedTuple):
    """What one read of a rollout found, as plain data (it crosses processes as is;
    :func:`rollout_of` builds the values)."""

    path: str
    thread_id: str | None
    cli_version: str | None
    cwd: str | None
    parent_id: str | None
    responses: list[RawCodexEntry]
    """``(response id, model, input, cached input, output, reasoning, segment,
    timestamp)`` in file order, one per response id."""
    compactions: list[RawCodexCompaction]
    """``(context before it, responses before it, summary characters, timestamp)``."""
    lines: int
    malformed: int
    size: int
    long_lines: int
    duplicates: int


@dataclass(frozen=True, slots=True)
class CodexResponse:
    """One model response of a Codex thread, as Codex counts it: ``input_tokens``
    includes ``cached_input_tokens`` and ``output_tokens`` includes
    ``reasoning_output_tokens``."""

    response_id: str
    model: str | None
    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    reasoning_output_tokens: int
    segment: int = 0
    """The compactions before it."""
    timestamp: str | None = None

    @property
    def context_tokens(self) -> int:
        """The context of the next request: this response's input plus output."""
        return self.input_tokens + self.output_tokens

    @property
    def usage(self) -> Usage:
        """In the categories ctxrelay prices (:mod:`ctxrelay.pricing`): the uncached input,
        the cached input as cache reads, no cache writes (OpenAI charges none)."""
        cached = self.cached_input_tokens
        return Usage(self.input_tokens - cached, 0, cached, self.output_tokens)


@dataclass(frozen=True, slots=True)
class Rollout:
    """Everything the analyzer reads from one Codex rollout file."""

    path: str
    thread_id: str | None
    cli_version: str | None
    cwd: str | None
    parent_id: str | None
    """The parent thread of a subagent's rollout; ``None`` for a thread of the user's."""
    responses: tuple[CodexResponse, ...]
    compactions: tuple[Compaction, ...] = ()
    lines: int = 0
    malformed_lines: int = 0
    size_bytes: int = 0
    long_lines: int = 0
    duplicate_responses: int = 0

    @property
    def session_id(self) -> str | None:
        """The thread id, and for a later segment of the thread (a file Codex names
        ``rollout-…-<thread>_<segment>.jsonl``, written by a revert) its segment too: one
        id per file."""
        thread = self.thread_id
        if thread is None:
            return None
        stem = os.path.splitext(os.path.basename(self.path))[0]
        _, found, segment = stem.partition(f"{thread}_")
        return f"{thread}_{segment}" if found and segment else thread

    def transcript(self) -> Transcript:
        """The :class:`~ctxrelay.transcripts.Transcript` the analyzer prices and replays:
        each response under its response id, its usage in ctxrelay's categories (so its
        ``context_tokens`` is the request's input, as for a Claude Code response)."""
        models: dict[str, None] = {r.model: None for r in self.responses if r.model}
        return Transcript(
            path=self.path,
            session_id=self.session_id,
            version=self.cli_version,
            responses=tuple(
                Response(r.response_id, r.model, r.usage, False, r.segment, r.timestamp)
                for r in self.responses
            ),
            compactions=self.compactions,
            lines=self.lines,
            malformed_lines=self.malformed_lines,
            size_bytes=self.size_bytes,
            models=tuple(models),
            long_lines=self.long_lines,
            format="codex",
            cwd=self.cwd,
            parent_id=self.parent_id,
        )


class _Payload(TypedDict, total=False):
    """The keys of a payload the rules read; the rest (base instructions, replacement
    history, content) is skipped unbuilt."""

    type: Any
    info: Any
    id: Any
    session_id: Any
    cwd: Any
    cli_version: Any
    parent_thread_id: Any
    source: Any
    model: Any
    model_name: Any
    metadata: Any
    response_id: Any
    usage: Any
    message: Any


class _Line(TypedDict, total=False):
    type: Any
    timestamp: Any
    payload: _Payload | None


_decode_line = msgspec.json.Decoder(_Line).decode


def _decoded(line: bytes | bytearray) -> dict[str, Any] | None:
    """The record of ``line`` with the keys the rules read; ``None`` when it is not a
    JSON object."""
    if not line.rstrip().endswith(b"}"):
        return None  # cut short: nothing to decode
    try:
        try:
            record: Any = _decode_line(line)
            # msgspec does not check that the strings it skips are UTF-8; json refuses them
            if not line.isascii():
                line.decode("utf-8")
        except msgspec.DecodeError:  # a key of another type, a value out of its range
            record = loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _model_of(payload: dict[str, Any]) -> str | None:
    """The model a ``turn_context`` or ``token_count`` payload names, where ccusage
    looks: ``info.model``, ``info.model_name``, ``info.metadata.model``, ``model``,
    ``metadata.model``."""
    info: object = payload.get("info")
    for where in (info, payload):
        if not isinstance(where, dict):
            continue
        names: list[object] = [where.get("model")]
        if where is info:
            names.append(where.get("model_name"))
        meta = where.get("metadata")
        names.append(meta.get("model") if isinstance(meta, dict) else None)
        for name in names:
            if isinstance(name, str) and name.strip():
                return name.strip()
    return None


def _parent(payload: dict[str, Any]) -> str | None:
    parent = _str(payload.get("parent_thread_id"))
    source = payload.get("source")
    if parent is None and isinstance(source, dict):
        agent = source.get("subagent")
        spawn = agent.get("thread_spawn") if isinstance(agent, dict) else None
        if isinstance(spawn, dict):
            parent = _str(spawn.get("parent_thread_id"))
    return parent


class CodexPass:
    """The records of one rollout's candidate lines, taken in file order: the one
    statement of the rules above (the tests feed it ``json.loads`` of every line and
    compare with the block reader)."""

    def __init__(self) -> None:
        self.meta: dict[str, Any] | None = None
        self.model: str | None = None
        self.seen: set[str] = set()
        self.responses: list[RawCodexEntry] = []
        # each with the same counts for token_count events: (context, responses before)
        self.compactions: list[tuple[int | None, int, int, str | None, int | None, int]] = []
        self.segment = 0
        self.duplicates = 0
        self.last_context: int | None = None
        # counted from token_count events, for a rollout without usage records
        self.counted: list[RawCodexEntry] = []
        self.counted_context: int | None = None
        self.total: tuple[int, int, int, int] | None = None

    def feed(self, record: dict[str, Any]) -> None:
        payload = record.get("payload")
        if not isinstance(payload, dict):
            return
        kind = record.get("type")
        stamp = _str(record.get("timestamp"))
        if kind == "token_usage_record":
            counts = codex_counts(payload.get("usage"))
            rid = _str(payload.get("response_id"))
            if counts is None or rid is None:
                return
            if rid in self.seen:
                self.duplicates += 1
                return
            self.seen.add(rid)
            self.responses.append((rid, self.model, *counts, self.segment, stamp))
            self.last_context = counts[0] + counts[2]
        elif kind == "turn_context":
            self.model = _model_of(payload) or self.model
        elif kind == "event_msg" and payload.get("type") == "token_count":
            self._token_count(payload, stamp)
        elif kind == "compacted":
            message = payload.get("message")
            chars = len(message) if isinstance(message, str) else 0
            self.compactions.append(
                (
                    self.last_context,
                    len(self.responses),
                    chars,
                    stamp,
                    self.counted_context,
                    len(self.counted),
                )
            )
            self.segment += 1
            self.last_context = self.counted_context = None
        elif kind == "session_meta" and self.meta is None:
            self.meta = payload

    def _token_count(self, payload: dict[str, Any], stamp: str | None) -> None:
        info = payload.get("info")
        if not isinstance(info, dict) or stamp is None:
            return
        total = codex_counts(info.get("total_token_usage"))
        last = codex_counts(info.get("last_token_usage"))
        if total is not None and total == self.total:
            return  # a repeat
        if last is None and total is not None:  # a total alone: what it added
            before = self.total or (0, 0, 0, 0)
            fresh, cached, output, reasoning = (
                max(a - b, 0) for a, b in zip(total, before, strict=True)
            )
            last = (fresh, min(cached, fresh), output, reasoning)
        if last is None or not any(last):
            return
        if total is not None:
            self.total = total
        self.model = _model_of(payload) or self.model
        n = len(self.counted)
        self.counted.append((f"token_count-{n + 1}", self.model, *last, self.segment, stamp))
        self.counted_context = last[0] + last[2]

    def result(
        self, path: str, *, lines: int, malformed: int, size: int, long_lines: int
    ) -> RawRollout:
        meta = self.meta or {}
        by_records = bool(self.responses) or not self.counted
        compactions = [
            (pre, after, chars, stamp) if by_records else (pre2, after2, chars, stamp)
            for pre, after, chars, stamp, pre2, after2 in self.compactions
        ]
        entries = self.responses if by_records else self.counted
        if any(entry[1] is None for entry in entries):  # a rollout that names no model
            entries = [(e[0], e[1] or LEGACY_MODEL, *e[2:]) for e in entries]
        return RawRollout(
            path,
            _str(meta.get("id")) or _str(meta.get("session_id")),
            _str(meta.get("cli_version")),
            _str(meta.get("cwd")),
            _parent(meta),
            entries,
            compactions,
            lines,
            malformed,
            size,
            long_lines,
            self.duplicates,
        )


_NEEDLES = (USAGE_RECORD, TURN_CONTEXT, COMPACTED, TOKEN_COUNT)
"""A line naming one of these is decoded (and, until the session meta is read, a line
naming ``session_meta``)."""


def is_candidate(line: bytes, meta_read: bool, last_unterminated: bool) -> bool:
    """Whether ``line`` is decoded (the rule :class:`_Read` applies block by block)."""
    if last_unterminated or any(needle in line for needle in _NEEDLES):
        return True
    return not meta_read and _META in line


class _Read(LineSink):
    """One rollout's read in progress."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.rules = CodexPass()

    def lines_of(self, data: bytes | bytearray, lo: int, hi: int, final: bool = False) -> None:
        self.check_start(data, lo, hi)
        found: dict[int, tuple[int, bool]] = {}  # start: (end, found for its type)
        rules = self.rules
        needles = [(n, True) for n in _NEEDLES]
        if rules.meta is None:
            needles.append((_META, False))
        for needle, typed in needles:
            for start, end in spans(data, needle, lo, hi):
                seen = found.get(start)
                found[start] = (end, typed or (seen is not None and seen[1]))
        if final:  # the unterminated last line is decoded whatever it holds
            found[max(data.rfind(b"\n", lo, hi) + 1, lo)] = (hi, True)
        for start in sorted(found):
            end, typed = found[start]
            # found for the session meta's name alone: wanted only until the meta is read
            if not typed and rules.meta is not None:
                continue
            self.lines += 1
            record = _decoded(data[start:end])
            if record is None:
                self.malformed += 1
                continue
            rules.feed(record)


def read_rollout_raw(path: str, *, line_cap: int = TRANSCRIPT_LINE_MAX_BYTES) -> RawRollout:
    """Read a whole rollout once (:class:`RawRollout`); ``line_cap`` is the longest line
    read. Raises :class:`~ctxrelay.errors.TranscriptError` when the file is missing, is
    not a readable regular file, is empty or is not JSON lines."""
    read = _Read(path)
    size = read_file(path, read, line_cap)
    return read.rules.result(
        path, lines=read.lines, malformed=read.malformed, size=size, long_lines=read.long_lines
    )


def rollout_of(raw: RawRollout) -> Rollout:
    """The :class:`Rollout` of :func:`read_rollout_raw`'s data."""
    return Rollout(
        path=raw.path,
        thread_id=raw.thread_id,
        cli_version=raw.cli_version,
        cwd=raw.cwd,
        parent_id=raw.parent_id,
        responses=tuple(CodexResponse(*entry) for entry in raw.responses),
        compactions=tuple(
            Compaction(pre, None, after, chars, stamp)
            for pre, after, chars, stamp in raw.compactions
        ),
        lines=raw.lines,
        malformed_lines=raw.malformed,
        size_bytes=raw.size,
        long_lines=raw.long_lines,
        duplicate_responses=raw.duplicates,
    )


def read_rollout(path: str | os.PathLike[str]) -> Rollout:
    """Read a whole Codex rollout once (raises as :func:`read_rollout_raw`)."""
    return rollout_of(read_rollout_raw(os.fspath(path)))


Shape: TypeAlias = Literal["claude", "codex"]

_CODEX_TYPES = "session_meta|turn_context|event_msg|response_item|compacted|token_usage_record"
_CODEX_START = re.compile(
    rb'\{\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*(?:"ordinal"\s*:\s*\d+\s*,\s*)?'
    rb'"type"\s*:\s*"(?:' + _CODEX_TYPES.encode() + rb')"\s*,\s*"payload"\s*:'
)
"""The start of a rollout line as Codex writes it (and as ccusage's loader tests write
one): its time, its ordinal (newer Codex), its type, its payload."""


class _Head(TypedDict, total=False):
    type: Any
    payload: msgspec.Raw
    message: msgspec.Raw


_decode_head = msgspec.json.Decoder(_Head).decode


def _shape_of_line(line: bytes, complete: bool) -> Shape | None:
    """Which agent wrote a file whose first line (or its start, when not ``complete``)
    is ``line``: a Codex line is ``{timestamp, [ordinal,] type, payload}``, a Claude Code
    line has a ``type`` and no ``payload``; ``None`` when neither."""
    if _CODEX_START.match(line):
        return "codex"
    if not complete:
        # too long to decode here: a Claude Code line names its type near the start
        return "claude" if b'"type":"' in line and b'"payload":' not in line else None
    try:
        head = _decode_head(line)
    except (msgspec.DecodeError, ValueError):
        return None
    if not isinstance(head, dict) or not isinstance(head.get("type"), str):
        return None
    return "codex" if "payload" in head and "message" not in head else "claude"


def file_shape(path: str | os.PathLike[str]) -> Shape | None:
    """The format of the file at ``path`` told by its first line's keys (read from the
    first 16 KiB): ``"codex"``, ``"claude"``, or ``None`` when it is neither's (or the
    file cannot be read: the reader then says why)."""
    try:
        fd = open_fd(os.fspath(path))
    except TranscriptError:
        return None
    if fd is None:
        return None
    with open(fd, "rb", buffering=0) as f:
        head = f.read(_HEAD_BYTES) or b""
    first, newline, _ = head.partition(b"\n")
    return _shape_of_line(first.strip(), bool(newline))


def codex_place(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` sits where Codex writes rollouts: named ``rollout-*.jsonl``, or
    under a ``sessions`` folder (``$CODEX_HOME/sessions/...``; ccusage reads every
    ``*.jsonl`` there). A Claude Code transcript is under ``projects``."""
    parts = os.path.normpath(os.path.abspath(os.fspath(path))).split(os.sep)
    return parts[-1].startswith("rollout-") or "sessions" in parts[:-1]


def is_rollout(path: str | os.PathLike[str]) -> bool:
    """Whether the file at ``path`` is a Codex rollout rather than a Claude Code
    transcript, by its first line's shape (:func:`file_shape`), or, when that line is
    neither's, by its place (:func:`codex_place`). False when it cannot be read (the
    reader then says why)."""
    shape = file_shape(path)
    return shape == "codex" or (shape is None and codex_place(path))
