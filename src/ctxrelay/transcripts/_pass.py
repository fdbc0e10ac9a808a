"""The analyzer's reader proper: one forward pass over a whole transcript, into plain data.

It imports only what the interpreter has loaded already (``os``), ``mmap`` and json's C
codec (through :mod:`ctxrelay._fastjson`), because ``ctxrelay analyze --json`` is
measured whole process against a native binary: on a 10 MB corpus ``dataclasses`` or
``json`` cost more to import than the pass takes. It returns tuples, which
:mod:`ctxrelay.transcripts._scan` turns into a :class:`~ctxrelay.transcripts.Transcript`
and which a forked reader sends through a pipe in :mod:`marshal` form as they are.

How it reads (``docs/analyze.md``, "How it reads"):

* The file is mapped, not copied, and a byte search over the mapping finds the few
  lines that can matter: every line with a usage object (its ``"output_tokens":``), the
  compaction boundaries, the compact summaries after the first boundary, and an
  unterminated last line. The other lines are never split out.
* A response's line is decoded without its ``message.content`` (almost all of its
  bytes): the text from the line's start to the first ``"content":[`` after
  ``"message":{``, and from the last ``],"stop_reason":`` before the usage on, is
  decoded as one document with the content emptied.
  JSON strings cannot hold an unescaped quote, so those byte patterns are structure; a
  pattern met anywhere else leaves the brackets unbalanced and the spliced document does
  not parse. Any line whose splice does not parse is decoded whole, so the records are
  the ones a full decode gives.
* Where it was built, ``_native.c`` does the same pass in C (decision 17 in
  ``docs/decisions.md``) and :func:`read_raw` uses it; :func:`_read` here is the
  reference, and reads any file the C pass hands back (``None``: a line only json can
  judge). ``tests/transcripts/test_native.py`` holds the two to the same output.
"""

from __future__ import annotations

import json
import mmap
import os
import stat  # loaded with os already

from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts._counts import SYNTHETIC_MODEL, as_count

TYPE_CHECKING = False  # annotations only; mypy reads any constant named TYPE_CHECKING as true
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType
    from typing import Any, TypeAlias

    RawUsage: TypeAlias = tuple[int, int, int, int, int]
    RawEntry: TypeAlias = tuple[
        str, "str | None", RawUsage, bool, int, "str | None", "str | None", "str | None"
    ]
    RawCompaction: TypeAlias = tuple["int | None", "str | None", int, int, "str | None"]
    RawTranscript: TypeAlias = tuple[
        str, "str | None", "str | None", list[RawEntry], list[RawCompaction], int, int, int, int
    ]

_UNLOADED: Any = object()
_native: Any = _UNLOADED
"""The C version of this pass (``_native.c``), looked up on the first read
(the hooks import this module for :func:`open_fd` alone); ``None`` when it was not built
or ``CTXRELAY_PURE_PYTHON`` is set. This module's own code is the reference and the
fallback (``docs/analyze.md``, "How it reads")."""


def _accelerator() -> ModuleType | None:
    global _native  # noqa: PLW0603 - looked up once, on the first read
    if _native is _UNLOADED:
        _native = None
        if not os.environ.get("CTXRELAY_PURE_PYTHON"):
            try:
                from ctxrelay.transcripts import _native as found
            except ImportError:  # pragma: no cover - built wherever a C compiler is
                return None
            _native = found
    return _native  # type: ignore[no-any-return]


def has_c_pass() -> bool:
    """Whether :func:`read_raw` reads with the C pass (built, and not turned off by
    ``CTXRELAY_PURE_PYTHON``)."""
    return _accelerator() is not None


__all__ = [
    "ORJSON_MIN_BYTES",
    "decoder_for",
    "has_c_pass",
    "open_fd",
    "raw_response",
    "read_raw",
    "usage_tuple",
]

_USAGE = b'"output_tokens":'
"""Every usage object has it (the API always reports the output), and as a needle it
is several times faster to search for than ``"usage"``: its last byte, ``:``, is rarer
in JSON text than a quote, so the search skips further at each step."""
_BOUNDARY = b'"compact_boundary"'
_SUMMARY = b'"isCompactSummary"'
_MESSAGE = b'"message":{'
_CONTENT = b'"content":['
_CONTENT_END = b'],"stop_reason":'
_EMPTIED = len(_CONTENT)
_NO_RECORD: Any = object()  # "no record here" (a line that is not a JSON object)

ORJSON_MIN_BYTES = 32_000_000
"""From this much transcript on, the lines are decoded with orjson: it decodes several
times faster than json's C codec, but on this project's 2-core reference machine its
import (which pulls ``dataclasses``, ``uuid`` and ``datetime``) costs about 27 ms, more
than the whole pass over 10 MB takes (``docs/analyze.md``, "How it reads")."""

_POPULATE = getattr(mmap, "MAP_POPULATE", 0)
"""Fault the whole mapping in at once (Linux): one call instead of one per page."""


def open_fd(path: str) -> int | None:
    """A read-only descriptor of the transcript at ``path``; ``None`` when it does not
    exist (yet). Raises :class:`~ctxrelay.errors.TranscriptError` when it cannot be
    opened or is not a regular file (opening a FIFO named by a payload would hang)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise TranscriptError(f"cannot open the transcript {path!r}: {exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise TranscriptError(f"the transcript {path!r} is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _mapped(fd: int) -> mmap.mmap | bytes:
    """The file's bytes without copying them (an empty file cannot be mapped)."""
    if os.fstat(fd).st_size == 0:
        return b""
    if hasattr(mmap, "MAP_SHARED"):
        return mmap.mmap(fd, 0, flags=mmap.MAP_SHARED | _POPULATE, prot=mmap.PROT_READ)
    return mmap.mmap(fd, 0, access=mmap.ACCESS_READ)  # pragma: no cover - Windows


def usage_tuple(raw: object) -> RawUsage | None:
    """``(input, cache writes, cache reads, output, 1-hour cache writes)`` of a
    ``message.usage`` object, ``None`` when it is not one. The one rule for reading a
    usage object (:func:`ctxrelay.transcripts.usage_of` builds its ``Usage`` from it):
    writes without a time-to-live split count as 5-minute writes."""
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


def raw_response(message: dict[str, Any]) -> tuple[str, str | None, RawUsage] | None:
    """``(message id, model, usage)`` of an assistant line's ``message`` when it reports
    a real request; ``None`` otherwise (no id, no usage, or a synthetic response)."""
    message_id = message.get("id")
    if not isinstance(message_id, str) or not message_id:
        return None
    model = message.get("model")
    if model == SYNTHETIC_MODEL:
        return None
    usage = usage_tuple(message.get("usage"))
    if usage is None:
        return None
    return message_id, model if isinstance(model, str) else None, usage


def decoder_for(total_bytes: int) -> Callable[[bytes], Any]:
    """The line decoder for a run over ``total_bytes`` of transcript: json's C codec
    (:func:`ctxrelay._fastjson.loads`), or orjson from :data:`ORJSON_MIN_BYTES` on when
    it is installed (with json's codec for the rare line it refuses, integers over 64
    bits, so both read the same records). With the C pass, which decodes every line of a
    usual file itself, the Python pass only reads the rare file it hands back, and
    json's codec is used: orjson's import would cost more than such a file."""
    if total_bytes < ORJSON_MIN_BYTES or has_c_pass():
        return json.loads
    try:
        from orjson import loads as fast
    except ImportError:  # a platform without an orjson wheel
        return json.loads

    def loads(line: bytes) -> Any:
        try:
            return fast(line)
        except ValueError:
            return json.loads(line)

    return loads


def _decoded(line: bytes, loads: Callable[[bytes], Any]) -> Any:
    """The record of ``line``, or ``_NO_RECORD`` when it is not a JSON object."""
    if not line.rstrip().endswith(b"}"):
        return _NO_RECORD  # a line cut short (the usual malformed line): nothing to decode
    try:
        record = loads(line)
    except (ValueError, RecursionError):
        return _NO_RECORD
    return record if isinstance(record, dict) else _NO_RECORD


def _spliced(
    data: mmap.mmap | bytes, start: int, end: int, needle: int, loads: Callable[[bytes], Any]
) -> Any:
    """The record of a usage line without its ``message.content`` (``_NO_RECORD`` when
    the splice does not parse: the caller decodes the whole line)."""
    at = data.find(_MESSAGE, start, needle)
    if at == -1:
        return _NO_RECORD
    content = data.find(_CONTENT, at, needle)
    if content == -1:
        return _NO_RECORD
    # the last one before the usage: the content is most of the line, and the message's
    # keys between its end and the usage are plain values
    after = data.rfind(_CONTENT_END, content, needle)
    if after == -1:
        return _NO_RECORD
    return _decoded(data[start : content + _EMPTIED] + data[after:end], loads)


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


def _spans(data: mmap.mmap | bytes) -> list[tuple[int, int, int]]:
    """``(start, end, usage at or -1)`` of the lines that can matter, in file order."""
    size = len(data)
    found: dict[int, tuple[int, int]] = {}
    find, rfind = data.find, data.rfind
    at = find(_USAGE)
    while at != -1:
        start = rfind(b"\n", 0, at) + 1
        end = find(b"\n", at)
        if end == -1:
            end = size
        found[start] = (end, at)
        at = find(_USAGE, end)
    if size and data[size - 1 : size] != b"\n":
        # An unterminated last line is decoded whatever it holds: when it is a response
        # cut short it is counted as malformed, not silently passed over.
        last = rfind(b"\n") + 1
        found.setdefault(last, (size, -1))
    first_boundary = find(_BOUNDARY)
    if first_boundary != -1:
        for needle in (_BOUNDARY, _SUMMARY):
            at = find(needle, first_boundary)
            while at != -1:
                start = rfind(b"\n", 0, at) + 1
                end = find(b"\n", at)
                if end == -1:
                    end = size
                found.setdefault(start, (end, -1))
                at = find(needle, end)
    return [(start, *found[start]) for start in sorted(found)]


def read_raw(
    path: str, *, agent: bool = False, loads: Callable[[bytes], Any] = json.loads
) -> RawTranscript:
    """Read a whole transcript once: ``(path, session id, version, responses,
    compactions, lines decoded, malformed lines, size in bytes, synthetic responses)``.

    ``responses`` are ``(message id, model, usage, sidechain, segment, timestamp, agent
    id, request id)`` deduplicated by ``message.id`` in order of first appearance, each
    with the most complete usage of its lines; ``agent=True`` for a subagent's own file
    (all of its lines are its chain, none a sidechain); ``loads`` decodes a line
    (:func:`decoder_for`). Raises
    :class:`~ctxrelay.errors.TranscriptError` when the file is missing or is not a
    readable regular file.
    """
    fd = open_fd(path)
    if fd is None:
        raise TranscriptError(f"no transcript at {path!r}")
    try:
        data = _mapped(fd)
    finally:
        os.close(fd)
    try:
        native = _accelerator()
        done = native.read(data, agent) if native is not None else None
        if done is None:  # no C pass, or a line only json can judge: this module reads
            return _read(path, data, agent, loads)
        session, version, responses, compactions, lines, malformed, synthetic = done
        return (path, session, version, responses, compactions, lines, malformed, len(data),
                synthetic)  # fmt: skip
    finally:
        if not isinstance(data, bytes):
            data.close()


def _read(
    path: str, data: mmap.mmap | bytes, agent: bool, loads: Callable[[bytes], Any]
) -> RawTranscript:
    entries: dict[str, list[Any]] = {}
    main_count = 0
    segment = 0
    compactions: list[RawCompaction] = []
    awaiting_summary = False
    session_id: str | None = None
    version: str | None = None
    malformed = 0
    synthetic: set[str] = set()
    spans = _spans(data)
    for start, end, needle in spans:
        if needle == -1 and not awaiting_summary and end != len(data):
            # found for "isCompactSummary" or a boundary name alone: decode only a real
            # boundary, or a summary after one
            line = data[start:end]
            if _BOUNDARY not in line:
                continue
        record = _spliced(data, start, end, needle, loads) if needle != -1 else _NO_RECORD
        if record is _NO_RECORD:
            record = _decoded(data[start:end], loads)
            if record is _NO_RECORD:
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
                # changes it.
                raw = message.get("usage")
                if (
                    isinstance(raw, dict)
                    and message.get("model") != SYNTHETIC_MODEL
                    and as_count(raw.get("output_tokens")) >= seen[2][3]
                ):
                    seen[2] = usage_tuple(raw) or seen[2]
                continue
            found = raw_response(message)
            if found is None:
                if message.get("model") == SYNTHETIC_MODEL:
                    synthetic.add(str(key))
                continue
            message_id, model, usage = found
            entries[message_id] = [
                message_id,
                model,
                usage,
                sidechain,
                segment,
                _str_or_none(record.get("timestamp")),
                _str_or_none(record.get("agentId")),
                _str_or_none(record.get("requestId")),
            ]
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
            compactions.append((pre, trigger, main_count, 0, _str_or_none(record.get("timestamp"))))
            segment += 1
            awaiting_summary = True
        elif kind == "user" and awaiting_summary and record.get("isCompactSummary") is True:
            message = record.get("message")
            chars = _text_length(message.get("content")) if isinstance(message, dict) else 0
            pre, trigger, after, _, stamp = compactions[-1]
            compactions[-1] = (pre, trigger, after, chars, stamp)
            awaiting_summary = False
    return (
        path,
        session_id,
        version,
        [tuple(e) for e in entries.values()],
        compactions,
        len(spans),
        malformed,
        len(data),
        len(synthetic),
    )
