"""Each host's conversation reader by its name: ``session_history`` reads every window of
a handoff chain with the reader of the host that ran it. A host whose one transcript holds
several windows (the Gemini CLI's clear keeps the session and its file) also names how to
split it (:data:`WINDOWS`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping

from ctxrelay.transcripts._codex_conversation import codex_conversation
from ctxrelay.transcripts._conversation import Message, conversation
from ctxrelay.transcripts._gemini_conversation import gemini_conversation, gemini_windows
from ctxrelay.transcripts._opencode_session import opencode_conversation

__all__ = ["READERS", "WINDOWS", "conversation_of", "windows_of"]

READERS: Mapping[str, Callable[[str], Iterator[Message]]] = {
    "claude": conversation,
    "codex": codex_conversation,
    "gemini": gemini_conversation,
    "opencode": opencode_conversation,
}
"""A host's reader by its name (a new host adds its entry)."""

WINDOWS: Mapping[str, Callable[[str], Iterator[list[Message]]]] = {
    "gemini": gemini_windows,
}
"""The hosts whose one transcript holds several windows: its windows, oldest first."""


def conversation_of(host: str, path: str | os.PathLike[str]) -> Iterator[Message]:
    """The conversation of the session ``host`` ran, from its transcript at ``path``;
    nothing for a host this package has no reader for."""
    reader = READERS.get(host)
    return iter(()) if reader is None else reader(os.fspath(path))


def windows_of(host: str, path: str | os.PathLike[str]) -> list[list[Message]]:
    """The windows of the session ``host`` ran, oldest first: its transcript's windows
    where the host splits one (:data:`WINDOWS`), else one window, its whole conversation."""
    split = WINDOWS.get(host)
    if split is not None:
        return list(split(os.fspath(path))) or [[]]
    return [list(conversation_of(host, path))]
