"""The analyzer's view of one transcript: :class:`Transcript`, built from the one
forward pass of :mod:`ctxrelay.transcripts._pass` (which reads plain data, so that a
forked reader can send it through a pipe as it is)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from ctxrelay.transcripts._pass import read_raw
from ctxrelay.transcripts._records import Compaction, Response, Usage

TYPE_CHECKING = False  # annotations only; mypy reads any constant named TYPE_CHECKING as true
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ctxrelay.transcripts._pass import RawTranscript

__all__ = ["Transcript", "scan", "transcript_of"]


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


def transcript_of(raw: RawTranscript) -> Transcript:
    """The :class:`Transcript` of :func:`~ctxrelay.transcripts._pass.read_raw`'s data."""
    path, session_id, version, entries, compactions, lines, malformed, size, synthetic = raw
    main: list[Response] = []
    side: list[Response] = []
    models: dict[str, None] = {}
    request_ids: dict[str, str] = {}
    for message_id, model, usage, sidechain, segment, timestamp, agent_id, request_id in entries:
        if request_id:
            request_ids[message_id] = request_id
        response = Response(
            message_id, model, Usage(*usage), sidechain, segment, timestamp, agent_id
        )
        (side if sidechain else main).append(response)
        if model and not sidechain:
            models[model] = None
    return Transcript(
        path=path,
        session_id=session_id,
        version=version,
        responses=tuple(main),
        sidechain_responses=tuple(side),
        compactions=tuple(Compaction(*c) for c in compactions),
        lines=lines,
        malformed_lines=malformed,
        size_bytes=size,
        models=tuple(models),
        synthetic_responses=synthetic,
        request_ids=request_ids,
    )


def scan(
    path: str | os.PathLike[str],
    *,
    agent: bool = False,
    loads: Callable[[bytes], Any] = json.loads,
) -> Transcript:
    """Read a whole transcript once. ``agent=True`` for a subagent's own file (all of its
    lines are sidechain lines, and all of them are its chain); ``loads`` decodes a line
    (:func:`~ctxrelay.transcripts._pass.decoder_for`: json's C codec by default).

    Raises :class:`~ctxrelay.errors.TranscriptError` when the file is missing or is not a
    readable regular file.
    """
    return transcript_of(read_raw(os.fspath(path), agent=agent, loads=loads))
