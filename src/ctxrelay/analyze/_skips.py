"""What ``ctxrelay analyze`` skipped, and why: each skip is one warning line on stderr
that names the file once, and one entry of ``--json``'s ``skipped`` list.

A file is skipped whole when it is missing, not a regular file (a FIFO, a folder, a
symlink loop), unreadable, empty, not UTF-8 JSON lines, or of neither agent's shape;
lines of a file that is read are skipped when they are longer than the line cap
(:data:`~ctxrelay.budget.bounds.TRANSCRIPT_LINE_MAX_BYTES`) or are not a JSON object (a
line cut short, such as the one an agent is still writing).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from ctxrelay.budget.bounds import TRANSCRIPT_LINE_MAX_BYTES
from ctxrelay.errors import TranscriptError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ctxrelay.transcripts import Transcript

__all__ = ["CUT_LINES", "Skips", "line_skips"]

CUT_LINES = "not a JSON object (cut short, or not JSON)"


def line_skips(scanned: Iterable[Transcript]) -> list[TranscriptError]:
    """A skip for each file read with lines over the cap, and one for each file read
    with lines that are not a JSON object."""
    cap = f"longer than the line cap of {TRANSCRIPT_LINE_MAX_BYTES >> 20} MiB"
    skips = []
    for t in scanned:
        if t.long_lines:
            skips.append(TranscriptError(t.path, cap, lines=t.long_lines))
        if t.malformed_lines:
            skips.append(TranscriptError(t.path, CUT_LINES, lines=t.malformed_lines))
    return skips


@dataclass
class Skips:
    """Collects the skips of a run (pass it as ``on_skip``), warning as each comes."""

    stream: TextIO | None = None
    """Where the warnings go (``sys.stderr`` when ``None``)."""
    entries: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, path: str, exc: Exception) -> None:
        reason = exc.reason if isinstance(exc, TranscriptError) else str(exc)
        lines = exc.lines if isinstance(exc, TranscriptError) else None
        entry: dict[str, Any] = {"path": path, "reason": reason}
        if lines is None:
            what = path
        else:
            entry["lines"] = lines
            what = f"{lines} line{'s' if lines != 1 else ''} of {path}"
        self.entries.append(entry)
        stream = self.stream if self.stream is not None else sys.stderr
        stream.write(f"ctxrelay: warning: skipped {what}: {reason}\n")
