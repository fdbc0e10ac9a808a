"""One read of a session file, whichever agent wrote it: a Claude Code transcript
(:mod:`ctxrelay.transcripts._scan`), a Codex rollout (:mod:`ctxrelay.transcripts._codex`)
or a Gemini CLI session file (:mod:`ctxrelay.transcripts._gemini`, read whole into its
``Transcript``), told apart by the file's first line."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, TypeAlias

from ctxrelay.transcripts._codex import RawRollout, is_rollout, read_rollout_raw, rollout_of
from ctxrelay.transcripts._gemini import is_gemini_session, read_gemini
from ctxrelay.transcripts._scan import Transcript, read_raw, transcript_of

if TYPE_CHECKING:
    from ctxrelay.transcripts._pass import RawTranscript

__all__ = ["RawFile", "read_file", "scan_file", "transcript_from"]

RawFile: TypeAlias = "RawTranscript | RawRollout | Transcript"


def read_file(path: str, *, agent: bool = False) -> RawFile:
    """Read a whole session file once, as plain data. ``agent=True`` for a Claude Code
    subagent's own file (a Codex subagent has a rollout of its own, read as any other).
    Raises :class:`~ctxrelay.errors.TranscriptError` as both readers do."""
    if not agent and is_rollout(path):
        return read_rollout_raw(path)
    if not agent and is_gemini_session(path):
        return read_gemini(path)
    return read_raw(path, agent=agent)


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
