"""One read of a session file, whichever agent wrote it: a Claude Code transcript
(:mod:`ctxrelay.transcripts._scan`), a Codex rollout (:mod:`ctxrelay.transcripts._codex`)
or a Gemini CLI session file (:mod:`ctxrelay.transcripts._gemini`, read whole into its
``Transcript``), told apart by the shape of the file's first line
(:func:`~ctxrelay.transcripts._codex.file_shape`,
:func:`~ctxrelay.transcripts._gemini.is_gemini_session`) and, when that line is no
agent's, by the file's place (:func:`~ctxrelay.transcripts._codex.codex_place`). A file
of no agent's shape in which the reader of its place found nothing is no session file:
it is refused with its reason, never passed over unseen."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, TypeAlias

from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts._codex import (
    RawRollout,
    codex_place,
    file_shape,
    read_rollout_raw,
    rollout_of,
)
from ctxrelay.transcripts._gemini import is_gemini_session, read_gemini
from ctxrelay.transcripts._scan import Transcript, read_raw, transcript_of

if TYPE_CHECKING:
    from ctxrelay.transcripts._pass import RawTranscript

__all__ = ["UNKNOWN_SHAPE", "RawFile", "read_file", "scan_file", "transcript_from"]

RawFile: TypeAlias = "RawTranscript | RawRollout | Transcript"

UNKNOWN_SHAPE = (
    "not a Claude Code transcript, a Codex rollout or a Gemini CLI session file (its "
    "first line is no agent's, and nothing in it was read)"
)


def read_file(path: str, *, agent: bool = False) -> RawFile:
    """Read a whole session file once, as plain data, a Claude Code session file's file
    tool calls with it. ``agent=True`` for a Claude Code subagent's own file (a Codex
    subagent has a rollout of its own, read as any other).
    Raises :class:`~ctxrelay.errors.TranscriptError` as the readers do, and when the
    file has no agent's shape and its place's reader found nothing in it."""
    if agent:
        return read_raw(path, agent=agent)
    shape = file_shape(path)
    if shape is None and is_gemini_session(path):
        return read_gemini(path)
    codex = shape == "codex" or (shape is None and codex_place(path))
    # a session file's file tool calls, which the replays read, in the same pass
    raw: RawFile = read_rollout_raw(path) if codex else read_raw(path, touches=True)
    if shape is None and not (raw.responses or raw.compactions):
        raise TranscriptError(path, UNKNOWN_SHAPE)
    return raw


def transcript_from(raw: RawFile) -> Transcript:
    """The :class:`~ctxrelay.transcripts.Transcript` of :func:`read_file`'s data."""
    if isinstance(raw, Transcript):
        return raw
    if isinstance(raw, RawRollout):
        return rollout_of(raw).transcript()
    return transcript_of(raw)


def scan_file(path: str | os.PathLike[str], *, agent: bool = False) -> Transcript:
    """:func:`read_file` and :func:`transcript_from` in one call."""
    return transcript_from(read_file(os.fspath(path), agent=agent))
