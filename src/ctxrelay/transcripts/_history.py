"""Each host's conversation reader by its name: ``session_history`` reads every window of
a handoff chain with the reader of the host that ran it."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping

from ctxrelay.transcripts._codex_conversation import codex_conversation
from ctxrelay.transcripts._conversation import Message, conversation

__all__ = ["READERS", "conversation_of"]

READERS: Mapping[str, Callable[[str], Iterator[Message]]] = {
    "claude": conversation,
    "codex": codex_conversation,
}
"""A host's reader by its name (a new host adds its entry)."""


def conversation_of(host: str, path: str | os.PathLike[str]) -> Iterator[Message]:
    """The conversation of the session ``host`` ran, from its transcript at ``path``;
    nothing for a host this package has no reader for."""
    reader = READERS.get(host)
    return iter(()) if reader is None else reader(os.fspath(path))
