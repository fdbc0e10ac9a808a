"""The analyzer's reader: one fast forward pass over a whole transcript.

Most lines of a transcript (tool results, progress, file snapshots) cannot hold what
the analyzer needs, so a byte search over the whole file finds the few lines that can
(the others are never split out, let alone decoded), and the lines
it keeps are decoded with orjson when it is installed (the standard ``json`` otherwise,
and for the rare line orjson refuses, so both decoders read the same records).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ctxrelay.transcripts._records import (
    SYNTHETIC_MODEL,
    Compaction,
    Response,
    Usage,
    as_count,
    response_of,
    usage_of,
)
from ctxrelay.transcripts._tail import open_transcript

__all__ = ["DECODER", "Transcript", "scan"]

_decode: Callable[[bytes], Any]
try:
    from orjson import loads as _decode

    DECODER = "orjson"
except ImportError:  # orjson is a core dependency; this keeps platforms without a wheel
    _decode = json.loads
    DECODER = "json"

_USAGE = b'"output_tokens":'
"""Every usage object has it (the API always reports the output), and as a needle it
is several times faster to search for than ``"usage"``: its last byte, ``:``, is rarer
in JSON text than a quote, so the search skips further at each step."""
_BOUNDARY = b'"compact_boundary"'
_SUMMARY = b'"isCompactSummary"'


def _loads(line: bytes) -> Any:
    try:
        return _decode(line)
    except ValueError:
        if _decode is json.loads:
            raise
        return json.loads(line)  # what orjson refuses (integers over 64 bits) json may read


@dataclass(frozen=True, slots=True)
class Transcript:
    """Everything the analyzer reads from one transcript file.

    ``responses`` is the chain (the main chain of a session file, or every response of a
    subagent file), deduplicated by ``message.id``, in order of first appearance.
    ``sidechain_responses`` are the inline subagent responses of old (< 2.0) session
    files. ``malformed_lines`` counts candidate lines that did not parse (a truncated
    last line is one). ``synthetic_responses`` counts the responses Claude Code made up
    itself (model ``<synthetic>``: no request was sent, nothing is priced).
    ``request_ids`` maps a response's ``message.id`` to the ``requestId`` of its line,
    where the line has one (the analyzer dedupes responses across files by both).
    """

    path: str
    session_id: str | None
    version: str | None
    responses: tuple[Response, ...]
    sidechain_responses: tuple[Response, ...] = ()
    compactions: tuple[Compaction, ...] = ()
    lines: int = 0
    """The lines decoded: those that can hold a response, a boundary or a summary (the
    file's other lines are never split out, so they are not counted)."""
    malformed_lines: int = 0
    size_bytes: int = 0
    models: tuple[str, ...] = field(default=())
    synthetic_responses: int = 0
    request_ids: dict[str, str] = field(default_factory=dict, hash=False)

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


@dataclass(slots=True)
class _Entry:
    """A response while the pass runs (mutable: a later line updates its usage)."""

    model: str | None
    usage: Usage
    sidechain: bool
    segment: int
    timestamp: str | None
    agent_id: str | None
    request_id: str | None


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


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _candidates(data: bytes) -> list[bytes]:
    """The lines of ``data`` that can matter, in file order: those with a usage object
    (every response, a synthetic one too: found by its ``output_tokens``), the
    compaction boundaries, after the first boundary the compact summaries, and an
    unterminated last line."""
    ends: dict[int, int] = {}
    find, rfind = data.find, data.rfind

    def collect(needle: bytes, at: int) -> None:
        at = find(needle, at)
        while at != -1:
            start = rfind(b"\n", 0, at) + 1
            end = find(b"\n", at)
            if end == -1:
                end = len(data)
            ends[start] = end
            at = find(needle, end)

    collect(_USAGE, 0)
    if data and not data.endswith(b"\n"):
        # An unterminated last line is decoded whatever it holds: when it is a response
        # cut short it is counted as malformed, not silently passed over.
        ends[rfind(b"\n") + 1] = len(data)
    first_boundary = find(_BOUNDARY)
    if first_boundary != -1:
        collect(_BOUNDARY, first_boundary)
        collect(_SUMMARY, first_boundary)
    return [data[start : ends[start]] for start in sorted(ends)]


def scan(path: str | os.PathLike[str], *, agent: bool = False) -> Transcript:
    """Read a whole transcript once. ``agent=True`` for a subagent's own file (all of its
    lines are sidechain lines, and all of them are its chain).

    Raises :class:`~ctxrelay.errors.TranscriptError` when the file is missing or is not a
    readable regular file.
    """
    from ctxrelay.errors import TranscriptError

    name = os.fspath(path)
    f = open_transcript(name)
    if f is None:
        raise TranscriptError(f"no transcript at {name!r}")
    entries: dict[str, _Entry] = {}
    main_count = 0
    segment = 0
    compactions: list[Compaction] = []
    awaiting_summary = False
    session_id: str | None = None
    version: str | None = None
    malformed = 0
    synthetic: set[str] = set()
    with f:
        data = f.read()
    size = len(data)
    candidates = _candidates(data)
    lines = len(candidates)
    for line in candidates:
        if (
            not awaiting_summary
            and _USAGE not in line
            and _BOUNDARY not in line
            and line is not candidates[-1]
        ):
            continue  # found for "isCompactSummary" alone, with no boundary before it
        try:
            record: Any = _loads(line)
        except (ValueError, RecursionError):
            malformed += 1
            continue
        if not isinstance(record, dict):
            malformed += 1
            continue
        if session_id is None:
            session_id = _str_or_none(record.get("sessionId"))
            version = _str_or_none(record.get("version"))
        sidechain = not agent and record.get("isSidechain") is True
        kind = record.get("type")
        if kind == "assistant":
            message = record.get("message")
            if not isinstance(message, dict):
                continue
            key = message.get("id")
            seen = entries.get(key) if isinstance(key, str) else None
            if seen is not None:
                # A later line of a response already read: only a larger output count
                # changes it, so its usage is built only then.
                raw = message.get("usage")
                if (
                    isinstance(raw, dict)
                    and message.get("model") != SYNTHETIC_MODEL
                    and as_count(raw.get("output_tokens")) >= seen.usage.output_tokens
                ):
                    seen.usage = usage_of(raw) or seen.usage
                continue
            found = response_of(record)
            if found is None:
                if message.get("model") == SYNTHETIC_MODEL:
                    synthetic.add(str(message.get("id")))
                continue
            message_id, model, usage = found
            entries[message_id] = _Entry(
                model,
                usage,
                sidechain,
                segment,
                _str_or_none(record.get("timestamp")),
                _str_or_none(record.get("agentId")),
                _str_or_none(record.get("requestId")),
            )
            if not sidechain:
                main_count += 1
        elif kind == "system" and record.get("subtype") == "compact_boundary":
            if sidechain:
                continue
            meta = record.get("compactMetadata")
            pre = trigger = None
            if isinstance(meta, dict):
                pre = as_count(meta.get("preTokens")) if "preTokens" in meta else None
                trigger = _str_or_none(meta.get("trigger"))
            compactions.append(
                Compaction(pre, trigger, main_count, 0, _str_or_none(record.get("timestamp")))
            )
            segment += 1
            awaiting_summary = True
        elif kind == "user" and awaiting_summary and record.get("isCompactSummary") is True:
            message = record.get("message")
            chars = _text_length(message.get("content")) if isinstance(message, dict) else 0
            last = compactions[-1]
            compactions[-1] = Compaction(
                last.pre_tokens, last.trigger, last.after_requests, chars, last.timestamp
            )
            awaiting_summary = False
    main: list[Response] = []
    side: list[Response] = []
    models: dict[str, None] = {}
    request_ids: dict[str, str] = {}
    for message_id, e in entries.items():
        if e.request_id:
            request_ids[message_id] = e.request_id
        response = Response(
            message_id, e.model, e.usage, e.sidechain, e.segment, e.timestamp, e.agent_id
        )
        (side if e.sidechain else main).append(response)
        if e.model and not e.sidechain:
            models[e.model] = None
    return Transcript(
        path=name,
        session_id=session_id,
        version=version,
        responses=tuple(main),
        sidechain_responses=tuple(side),
        compactions=tuple(compactions),
        lines=lines,
        malformed_lines=malformed,
        size_bytes=size,
        models=tuple(models),
        synthetic_responses=len(synthetic),
        request_ids=request_ids,
    )
