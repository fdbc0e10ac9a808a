"""The vocabulary every coding-agent host is adapted to: the events ctxrelay answers, the
answers it gives, and the :class:`Host` protocol an adapter implements.

A host's hooks have their own names (Claude Code's ``PreToolUse``, the Gemini CLI's
``BeforeTool``) and their own answer JSON (``permissionDecision: "deny"``,
``decision: "block"``, ``clearContext``). The handlers are written once against
:class:`Event` and :class:`Answer`; the adapter names which of its events is which and
encodes an :class:`Answer` the way its host reads it (:meth:`Host.encode`). The dispatch
(:func:`ctxrelay.hooks.dispatch.run`) joins the two.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple, Protocol, runtime_checkable

__all__ = ["Answer", "Event", "Handler", "Host", "join_text"]


class Event(StrEnum):
    """What happened in the host, in the core's words."""

    TOOL_CALL = "tool_call"
    """A tool call is about to run; the answer may deny it."""
    TOOL_DONE = "tool_done"
    """A tool finished; the answer may add context to its result."""
    PROMPT = "prompt"
    """A prompt starts a turn; the answer may add context to it."""
    TURN_END = "turn_end"
    """The main agent's turn ended; the answer may continue it with a prompt, or clear
    the context and continue in a fresh one."""
    SUBAGENT_END = "subagent_end"
    """A subagent ended."""
    SESSION_START = "session_start"
    """A session started, was cleared or resumed; the answer may add context to its first
    request."""
    COMPACTED = "compacted"
    """The host compacted the session's history."""


def join_text(first: str | None, second: str | None, sep: str = "\n\n") -> str | None:
    """Two pieces of text as one, either missing."""
    if not first:
        return second or None
    return f"{first}{sep}{second}" if second else first


class Answer(NamedTuple):
    """What a handler answers; every part optional, and a host encodes the parts its event
    can carry (:meth:`Host.encode`)."""

    deny: str | None = None
    """Deny the tool call; the reason reaches the agent as the call's result."""
    context: str | None = None
    """Text for the model: added to a tool's result, a prompt, or a session's start."""
    prompt: str | None = None
    """Continue the ended turn with this prompt."""
    clear: bool = False
    """With ``prompt``: clear the context first, so the prompt opens a fresh one."""
    notice: str | None = None
    """A line for the person, not the model."""

    def with_notice(self, text: str | None) -> Answer:
        """This answer with ``text`` shown to the person after its own notice."""
        return self._replace(notice=join_text(self.notice, text, "\n"))

    def with_prompt(self, text: str | None) -> Answer:
        """This answer with ``text`` after its prompt."""
        return self._replace(prompt=join_text(self.prompt, text))


class Handler(NamedTuple):
    """One event of a host: what it is in the core's words, and the module whose
    ``handle(payload) -> Answer | None`` answers it (imported only for that event)."""

    event: Event
    module: str


@runtime_checkable
class Host(Protocol):
    """What a coding-agent host's adapter supplies to the core."""

    @property
    def name(self) -> str:
        """The host's plain name: its state folder and its handoff chain links' host."""
        ...

    @property
    def handlers(self) -> Mapping[str, Handler]:
        """The host's event names ctxrelay answers, each with its :class:`Handler`."""
        ...

    def encode(self, event: Event, name: str, answer: Answer) -> Mapping[str, Any] | None:
        """``answer`` to the host's event ``name`` (an ``event``), as the host reads it;
        ``None`` when nothing of it can be said there."""
        ...

    def started(self, transcript_path: str, handoff: Path, since: int | None = None) -> bool:
        """Whether the session of ``transcript_path`` (one of this host's) has started
        from the handoff file ``handoff``: its first exchange went out with it. ``since``:
        the transcript's length when the file was given to it, where the host's start
        recorded it (:func:`ctxrelay.hooks.handoff.record_injected`). The core's
        once-only rule asks it (:func:`ctxrelay.hooks.handoff.settle`)."""
        ...
