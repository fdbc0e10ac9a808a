"""The analyzer's reading rules: which lines of a transcript count, and what they say.

This module is the one statement of the rules (``docs/analyze.md``, "How it reads");
:mod:`ctxrelay.transcripts._scan` applies them to a file, fast, and the tests apply them
line by line with ``json.loads`` and compare.

* The file's first line must be a JSON object (it starts with ``{``) in UTF-8 with no
  NUL byte; otherwise the file is not a transcript and is skipped whole.
* The lines that can matter are the candidates (:func:`is_candidate`): every line with a
  usage object (its ``"output_tokens":``), every line naming a compaction boundary, a
  line marked as a compact summary once a boundary was seen, and an unterminated last
  line (a response Claude Code is still writing counts as malformed, not as nothing).
  The other lines are never decoded.
* A candidate that is not a JSON object is malformed; a line longer than the cap
  (:data:`ctxrelay.budget.bounds.TRANSCRIPT_LINE_MAX_BYTES`) is skipped and counted.
* :class:`Pass` takes each decoded candidate in file order: responses deduplicated by
  ``message.id`` (a later line of the same response counts only with a larger output),
  compaction boundaries and the length of the summary after each.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias, cast

from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts._counts import SYNTHETIC_MODEL, as_count

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "BOUNDARY",
    "SUMMARY",
    "USAGE",
    "Pass",
    "RawTranscript",
    "first_line_problem",
    "is_candidate",
    "open_fd",
    "raw_response",
    "usage_tuple",
]

RawUsage: TypeAlias = tuple[int, int, int, int, int]
RawEntry: TypeAlias = tuple[
    str, str | None, RawUsage, bool, int, str | None, str | None, str | None
]
RawCompaction: TypeAlias = tuple[int | None, str | None, int, int, str | None]

USAGE = b'"output_tokens":'
"""Every usage object has it (the API always reports the output). As a needle it is
searched for faster than ``"usage"``: its last byte is rarer in JSON text than a quote."""
BOUNDARY = b'"compact_boundary"'
SUMMARY = b'"isCompactSummary"'


class RawTranscript(NamedTuple):
    """What one read of a transcript found, as plain data (it crosses processes as is;
    :func:`ctxrelay.transcripts._scan.transcript_of` builds the values)."""

    path: str
    session_id: str | None
    version: str | None
    responses: list[RawEntry]
    """``(message id, model, usage, sidechain, segment, timestamp, agent id, request
    id)``, deduplicated by message id in order of first appearance."""
    compactions: list[RawCompaction]
    """``(pre tokens, trigger, responses before it, summary characters, timestamp)``."""
    lines: int
    """The candidate lines decoded."""
    malformed: int
    size: int
    synthetic: int
    long_lines: int
    """Lines skipped for being longer than the cap."""
    touches: bytes | None = None
    """The main chain's file tool calls, packed
    (:func:`~ctxrelay.transcripts._touches.pack_touches`), when they were read in the
    same pass (:func:`ctxrelay.transcripts._formats.read_file`)."""


def open_fd(path: str) -> int | None:
    """A read-only descriptor of the transcript at ``path``; ``None`` when it does not
    exist (yet). Raises :class:`~ctxrelay.errors.TranscriptError` when it cannot be
    opened or is not a regular file (opening a FIFO named by a payload would hang)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise TranscriptError(path, (exc.strerror or str(exc)).lower()) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else ""
            raise TranscriptError(path, f"not a regular file{f' ({kind})' if kind else ''}")
    except BaseException:
        os.close(fd)
        raise
    return fd


def first_line_problem(line: bytes | bytearray, complete: bool) -> str | None:
    """Why a file whose first line is ``line`` is not a transcript, or ``None``.
    ``complete=False``: ``line`` is the start of a longer first line."""
    if b"\0" in line:
        return "binary data, not JSON lines"
    if line.lstrip()[:1] != b"{":
        return "not JSON lines (the first line is not a JSON object)"
    if complete:
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            return "not UTF-8 text"
    return None


def is_candidate(line: bytes, boundary_seen: bool, last_unterminated: bool) -> bool:
    """Whether ``line`` is decoded: it has a usage object or names a compaction boundary;
    or it is marked as a compact summary and a boundary was seen before it (or on it); or
    it is the unterminated last line."""
    if last_unterminated or USAGE in line or BOUNDARY in line:
        return True
    return boundary_seen and SUMMARY in line


def usage_tuple(raw: object) -> RawUsage | None:
    """``(input, cache writes, cache reads, output, 1-hour cache writes)`` of a
    ``message.usage`` object, ``None`` when it is not one. The one rule for reading a
    usage object (:func:`ctxrelay.transcripts.usage_of` builds its ``Usage`` from it):
    writes without a time-to-live split count as 5-minute writes. The analyzer's reader
    takes a plain usage object (every count a whole number from 0) decoded typed, by the
    same rule (``tests/transcripts/test_fuzz.py`` holds it to this one)."""
    if not isinstance(raw, dict):
        return None
    created = as_count(raw.get("cache_creation_input_tokens"))
    one_hour = 0
    split = raw.get("cache_creation")
    if isinstance(split, dict):
        one_hour = min(as_count(split.get("ephemeral_1h_input_tokens")), created)
    return (
        as_count(raw.get("input_tokens")),
        created,
        as_count(raw.get("cache_read_input_tokens")),
        as_count(raw.get("output_tokens")),
        one_hour,
    )


def raw_response(message: Mapping[str, Any]) -> tuple[str, str | None, RawUsage] | None:
    """``(message id, model, usage)`` of an assistant line's ``message`` when it reports
    a real request; ``None`` otherwise (no id, no usage, or a synthetic response)."""
    return _real(message.get("id"), message.get("model"), usage_tuple(message.get("usage")))


def _real(
    key: object, model: object, usage: RawUsage | None
) -> tuple[str, str | None, RawUsage] | None:
    """:func:`raw_response` of a message's id, model and usage."""
    if not isinstance(key, str) or not key or model == SYNTHETIC_MODEL or usage is None:
        return None
    return key, model if isinstance(model, str) else None, usage


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _text_length(content: object) -> int:
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(
            len(block["text"])
            for block in content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        )
    return 0


class Pass:
    """The records of one transcript's candidate lines, taken in file order.
    ``agent=True`` for a subagent's own file (all of its lines are its chain, none a
    sidechain)."""

    def __init__(self, agent: bool = False) -> None:
        self.agent = agent
        self.entries: dict[str, list[Any]] = {}
        self.main_count = 0
        self.segment = 0
        self.compactions: list[RawCompaction] = []
        self.awaiting_summary = False
        self.session_id: str | None = None
        self.version: str | None = None
        self.synthetic: set[str] = set()

    def wants(self, line: bytes | bytearray) -> bool:
        """Whether a candidate line found only for its summary mark needs decoding (a
        summary counts only after a boundary, once)."""
        return self.awaiting_summary or BOUNDARY in line

    def identify(self, session_id: object, version: object) -> None:
        """Take a line's session id and version, until a line has a session id."""
        if self.session_id is None:
            self.session_id = _str_or_none(session_id)
            self.version = _str_or_none(version)

    def feed(self, record: dict[str, Any]) -> None:
        """Take one decoded candidate line."""
        self.identify(record.get("sessionId"), record.get("version"))
        sidechain = not self.agent and record.get("isSidechain") is True
        kind = record.get("type")
        if kind == "assistant":
            self._response(record, sidechain)
        elif kind == "system" and record.get("subtype") == "compact_boundary":
            if sidechain:
                return
            meta = record.get("compactMetadata")
            pre = trigger = None
            if isinstance(meta, dict):
                pre = as_count(meta.get("preTokens")) if "preTokens" in meta else None
                trigger = _str_or_none(meta.get("trigger"))
            stamp = _str_or_none(record.get("timestamp"))
            self.compactions.append((pre, trigger, self.main_count, 0, stamp))
            self.segment += 1
            self.awaiting_summary = True
        elif kind == "user" and self.awaiting_summary and record.get("isCompactSummary") is True:
            message = record.get("message")
            chars = _text_length(message.get("content")) if isinstance(message, dict) else 0
            pre, trigger, after, _, stamp = self.compactions[-1]
            self.compactions[-1] = (pre, trigger, after, chars, stamp)
            self.awaiting_summary = False

    def _response(self, record: dict[str, Any], sidechain: bool) -> None:
        message = record.get("message")
        if not isinstance(message, dict):
            return
        self.response(
            message.get("id"),
            message.get("model"),
            usage_tuple(message.get("usage")),
            sidechain=sidechain,
            timestamp=record.get("timestamp"),
            agent_id=record.get("agentId"),
            request_id=record.get("requestId"),
        )

    def response(
        self,
        key: object,
        model: object,
        usage: RawUsage | None,
        *,
        sidechain: bool,
        timestamp: object,
        agent_id: object,
        request_id: object,
    ) -> None:
        """Take an ``assistant`` line's response: its ``message``'s id, model and usage
        (:func:`usage_tuple`), whether it is a sidechain's, and the line's keys."""
        seen = self.entries.get(key) if isinstance(key, str) else None
        if seen is not None:
            # A later line of a response already read: only a larger output count changes it.
            if usage is not None and model != SYNTHETIC_MODEL and usage[3] >= seen[2][3]:
                seen[2] = usage
            return
        found = _real(key, model, usage)
        if found is None:
            if model == SYNTHETIC_MODEL:
                self.synthetic.add(str(key))
            return
        message_id, name, usage = found
        self.entries[message_id] = [
            message_id,
            name,
            usage,
            sidechain,
            self.segment,
            _str_or_none(timestamp),
            _str_or_none(agent_id),
            _str_or_none(request_id),
        ]
        if not sidechain:
            self.main_count += 1

    def result(
        self, path: str, *, lines: int, malformed: int, size: int, long_lines: int
    ) -> RawTranscript:
        return RawTranscript(
            path,
            self.session_id,
            self.version,
            cast("list[RawEntry]", [tuple(e) for e in self.entries.values()]),
            self.compactions,
            lines,
            malformed,
            size,
            len(self.synthetic),
            long_lines,
        )
