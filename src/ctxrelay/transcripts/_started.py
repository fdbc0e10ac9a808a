"""Whether a host's session has started from a handoff file, read off its own transcript:
one rule per host that writes transcripts this package reads, so any host's hook can
settle a handoff another host's session took (the chain is one across hosts).

Claude Code: its transcript holds the ``SessionStart`` injection of the file (an
``attachment`` line ``hook_additional_context`` opened by :func:`injection_mark`) and,
after it, an ``api-request`` line, written once the request that carried it went out
(2.1.332). Codex: its rollout holds a response (or a compaction), as
:func:`~ctxrelay.transcripts.codex_context` reads it; the thread was given the file at its
start, so its first response answered it. A missing transcript, or one cut before that
(a crash), has not started. The Gemini CLI: its session file holds a response after the
user message naming the file (:func:`~ctxrelay.transcripts.gemini_started`). OpenCode:
its database holds a response after a user message of the session naming the file
(:func:`~ctxrelay.transcripts.opencode_started`), read with ``sqlite3``, which loads only
when an OpenCode session is asked about. Standard library only: every hook that settles
reads this.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

import ctxrelay.transcripts as _package
from ctxrelay.transcripts._codex_tail import codex_context
from ctxrelay.transcripts._gemini_tail import gemini_started

__all__ = [
    "STARTED_RULES",
    "StartedRule",
    "claude_started",
    "codex_started",
    "injection_mark",
    "started",
]


def injection_mark(path: Path) -> str:
    """What opens a handoff file's content in Claude Code's ``SessionStart`` injection."""
    return f'<handoff path="{path}">'


def claude_started(transcript_path: str, path: Path) -> bool:
    """Whether the Claude Code session of ``transcript_path`` has started from the
    handoff ``path``: its injection, then an ``api-request`` line."""
    mark = json.dumps(injection_mark(path))[1:-1].encode("utf-8", "surrogatepass")
    seen = False
    try:
        with open(transcript_path, "rb") as fh:
            for line in fh:
                if not seen:
                    seen = mark in line and b"hook_additional_context" in line
                elif b'"api-request"' in line:
                    try:
                        item = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(item, dict) and item.get("type") == "api-request":
                        return True
    except OSError:
        return False
    return False


def codex_started(transcript_path: str, path: Path) -> bool:
    """Whether the Codex thread of ``transcript_path`` has its first response."""
    del path  # the thread was given the file at its start
    return codex_context(transcript_path) is not None


def _opencode_started(transcript_path: str, path: Path) -> bool:
    # through the package's names, which load the reader (and sqlite3) on first use
    started: Callable[[str, Path], bool] = _package.opencode_started
    return started(transcript_path, path)


StartedRule = Callable[[str, Path, int | None], bool]
"""A host's rule: the transcript, the handoff file, and the transcript's length when the
file was given to it where the start recorded it (only Gemini's rule needs it: the
window that wrote the file names it too, in the same session file)."""

STARTED_RULES: Mapping[str, StartedRule] = {
    "claude": lambda transcript_path, path, since: claude_started(transcript_path, path),
    "codex": lambda transcript_path, path, since: codex_started(transcript_path, path),
    "gemini": lambda transcript_path, path, since: gemini_started(
        transcript_path, path.name, since=since
    ),
    "opencode": lambda transcript_path, path, since: _opencode_started(transcript_path, path),
}
"""Each host's rule by its name (a new host adds its entry)."""


def started(host: str, transcript_path: str, path: Path, since: int | None = None) -> bool:
    """:data:`STARTED_RULES` of ``host``; ``False`` for a host it has no rule for."""
    rule = STARTED_RULES.get(host)
    return rule is not None and rule(transcript_path, path, since)
