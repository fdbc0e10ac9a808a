"""Re-reads after a restart the replay makes and the recording did not.

A restart empties the context: a file the recording still held when it edited it (or
read it again, getting Claude Code's short "unchanged since last read" answer) must be
read in full again after a replayed restart. The rules (``docs/analyze.md``, "Re-reads
after a restart"):

* A file is *held by the recording* from a recorded read until the recording's own next
  compaction; *held by the replay* from a recorded read (or a re-read) until the
  replay's next restart. Only a file held by the recording and not by the replay is
  read again: where the recording restarted too, its own re-reads are in its curve.
* **Low end** (``edits``): an edit or a write of such a file (Claude Code's Edit and
  Write refuse a file not read in the conversation, so the read is certain), and a
  recorded read of it that carried less than the file (the replay's read is whole).
* **High end** (``touches``): also any other touch of it: a search naming its path, or
  a shell command naming its file name (the agent orients itself by reading).
* A re-read costs the file's largest recorded read, in tokens measured from the
  recording: the context the read's result added to the next request (that request's
  growth less the output before it), shared among that response's results by their
  size in bytes (evenly if one was not found); where no next request measures it (the
  recording compacted there), nothing is known and nothing is added.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ctxrelay.transcripts import Touches

__all__ = ["REREAD_CALL_TOKENS", "Bracket", "FileTouch", "Rereads", "file_touches"]

Bracket = Literal["edits", "touches"]
"""Which touches of a file the recording held make the replay read it again: its edits
and writes (the low end), or any touch (the high end)."""

REREAD_CALL_TOKENS = 100
"""The output of the response that calls Read again, and the call in the context."""


class FileTouch(NamedTuple):
    """A file tool call of one recorded response: ``kind`` as
    :data:`~ctxrelay.transcripts.TouchKind` or ``command`` (a shell command; ``path`` is
    then its text), and the tokens its result added to the context."""

    kind: str
    path: str
    tokens: int


def file_touches(
    touches: Touches,
    message_ids: Sequence[str],
    context: Sequence[int],
    outputs: Sequence[int],
    segments: Sequence[int],
) -> tuple[tuple[FileTouch, ...], ...]:
    """Each recorded response's file touches with their results in tokens, measured from
    the next request's growth where it can be (module docstring)."""
    out: list[tuple[FileTouch, ...]] = []
    n = len(message_ids)
    for i, message_id in enumerate(message_ids):
        found = touches.of(message_id)
        if not found:
            out.append(())
            continue
        calls = max(1, touches.called(message_id))
        shared = touches.results_bytes.get(message_id, 0)
        grown = 0
        if i + 1 < n and segments[i + 1] == segments[i]:
            grown = max(0, context[i + 1] - context[i] - outputs[i])
        row = []
        for t in found:
            if calls == 1:
                tokens = grown
            elif shared:
                tokens = grown * t.result_bytes // shared
            else:  # a result not found: an even share
                tokens = grown // calls
            row.append(FileTouch(t.kind, t.command or t.path, tokens))
        out.append(tuple(row))
    return tuple(out)


class Rereads:
    """One replay's re-reads: which files the recording and the replay hold, and what
    reading the missing ones again costs. Fed each recorded response in order
    (:meth:`after`) and each restart of the replay (:meth:`restart`).

    At the low end it also notes whether the high end would ever have read anything
    else (:attr:`differs`): the two brackets decide alike, and so keep the same state,
    until the first touch that is not an edit or a read of a file the replay lost; a
    replay that never meets one is its own high end."""

    __slots__ = (
        "bracket",
        "count",
        "differs",
        "files",
        "recorded",
        "replayed",
        "segments",
        "sizes",
        "tokens",
    )

    def __init__(
        self,
        files: Sequence[tuple[FileTouch, ...]],
        segments: Sequence[int],
        bracket: Bracket,
    ) -> None:
        self.files = files
        self.segments = segments
        self.bracket = bracket
        self.recorded: set[str] = set()
        self.replayed: set[str] = set()
        self.sizes: dict[str, int] = {}
        self.count = 0
        self.tokens = 0
        self.differs = False
        """The high end would have read a file this low end did not (at the low end)."""

    def restart(self) -> None:
        self.replayed.clear()

    def after(self, i: int) -> int:
        """Recorded response ``i`` was replayed: the tokens the replay must read again
        before the next request (0 for none)."""
        if i and self.segments[i] != self.segments[i - 1]:
            self.recorded.clear()  # the recording compacted before this request
        touched = self.files[i] if i < len(self.files) else ()
        if not touched:
            return 0
        recorded, replayed, sizes = self.recorded, self.replayed, self.sizes
        extra = 0
        high = self.bracket == "touches"
        for kind, path, tokens in touched:
            if kind == "command":
                if high or not self.differs:
                    for held in recorded - replayed:
                        name = os.path.basename(held)
                        if "." in name and name in path:
                            if not high:
                                self.differs = True
                                break
                            extra += sizes.get(held, 0)
                            replayed.add(held)
                continue
            missing = path in recorded and path not in replayed
            size = sizes.get(path, 0)
            if kind == "read":
                if missing:
                    extra += max(0, size - tokens)
                sizes[path] = max(size, tokens)
            elif kind == "write":
                if missing:
                    extra += size
            elif missing:  # a search of a file the replay lost
                if not high:
                    self.differs = True
                    continue
                extra += size
            else:
                continue  # a search of a file no one holds reads nothing
            recorded.add(path)
            replayed.add(path)
        if extra:
            self.count += 1
            self.tokens += extra
        return extra
