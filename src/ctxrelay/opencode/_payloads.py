"""The wire between ctxrelay's OpenCode plugin (``plugin/ctxrelay.ts``) and its core, as
``TypedDict`` s: what the plugin sends per event (one command per event,
``<hook> EVENT`` with the payload on stdin) and the one answer it executes, whatever the
event (``docs/opencode.md``, "The wire"; the fields checked against OpenCode 1.18.33 in
``docs/opencode-facts.md``).

The plugin forwards only the events the host answers (:data:`ctxrelay.opencode.host.
OPENCODE`'s handlers, written into the plugin at install), so an event nobody answers
costs no process. Every payload carries the session, the project's folders, the model
the session last called with its ``limit.context`` (from OpenCode's ``chat.params``),
and the newest finished step's tokens the plugin saw (from ``message.updated``): a
handler knows the context without a process per step.

Annotations only: the handlers import this module under ``TYPE_CHECKING``. A payload is
untrusted input: the handlers check every value's type before they use it and fail open
on anything else.
"""

# No ``from __future__ import annotations``: ``NotRequired`` must be seen at run time.
from typing import Any, Literal, NotRequired, TypedDict, get_args

__all__ = [
    "EVENT_NAMES",
    "ChatMessagePayload",
    "FreshStartedPayload",
    "ModelInfo",
    "OpenCodeAnswer",
    "OpenCodePayload",
    "SessionCompactedPayload",
    "SessionCreatedPayload",
    "SessionIdlePayload",
    "StepFinishedPayload",
    "StepRecord",
    "Tokens",
    "ToolAfterPayload",
    "ToolBeforePayload",
]

EventName = Literal[
    "tool.execute.before",
    "tool.execute.after",
    "chat.message",
    "step.finished",
    "session.idle",
    "session.created",
    "session.compacted",
    "fresh.started",
]
EVENT_NAMES: tuple[str, ...] = get_args(EventName)
"""Every event the plugin can forward (the wire's names: OpenCode's hook or bus event,
``step.finished`` and ``fresh.started`` being the plugin's own, see their payloads)."""


class ModelInfo(TypedDict):
    """The model of the session's last LLM call (``chat.params``' input)."""

    provider_id: str
    model_id: str
    context_limit: NotRequired[int]
    """``limit.context`` of the model, where OpenCode knows it (0 is left out)."""
    output_limit: NotRequired[int]


class Tokens(TypedDict):
    """An assistant message's ``tokens`` as OpenCode records them: ``input`` is the
    prompt less the cached tokens, ``total`` the prompt plus the completion."""

    total: NotRequired[int]
    input: int
    output: int
    reasoning: int
    cache: dict[str, int]
    """``{"read": …, "write": …}``."""


class StepRecord(TypedDict):
    """One finished LLM step (an assistant message with ``time.completed``)."""

    message_id: str
    model_id: str
    tokens: Tokens
    cost: float
    finish: NotRequired[str]
    """``tool-calls``, ``stop``, …"""
    summary: NotRequired[bool]
    """A compaction's summary."""


class _Session(TypedDict):
    session_id: str
    directory: str
    """The folder OpenCode runs in (the plugin's ``directory``), absolute."""
    worktree: str
    """The project's root (the git worktree), absolute."""
    ui: Literal["tui", "run", "serve"]
    """Where the person is: the interactive UI, ``opencode run`` or a bare server."""
    model: NotRequired[ModelInfo]


class _Common(_Session):
    step: NotRequired[StepRecord]
    """The newest finished step of the session the plugin saw. A step finishes after its
    tool calls ran: at a tool call's events it is the step before the one that made it
    (none during the session's first step)."""


class ToolBeforePayload(_Common):
    """``tool.execute.before``: a tool is about to run; a ``deny`` answer stops it (the
    plugin throws, and the model gets the text as the call's result)."""

    hook_event_name: Literal["tool.execute.before"]
    tool: str
    call_id: str
    args: dict[str, Any]
    """The call's arguments (``bash``: ``command``, ``workdir``, ``timeout``,
    ``description``; ``read``: ``filePath``, ``offset``, ``limit``)."""


class ToolAfterPayload(_Common):
    """``tool.execute.after``: the tool ran and its result goes to the model; a
    ``context`` answer is added to that result."""

    hook_event_name: Literal["tool.execute.after"]
    tool: str
    call_id: str
    args: dict[str, Any]
    output_length: int
    """Characters of the result the model gets (before any ``context``)."""


class ChatMessagePayload(_Common):
    """``chat.message``: a user message starts a turn; a ``context`` answer is added to
    it as a text part."""

    hook_event_name: Literal["chat.message"]
    message_id: str
    agent: str
    prompt: str
    """The message's text parts, joined."""


class StepFinishedPayload(_Session):
    """``message.updated`` for an assistant message once it has ``time.completed``: one
    LLM step ended (sent once per message). ``step`` is that step."""

    hook_event_name: Literal["step.finished"]
    step: StepRecord


class SessionIdlePayload(_Common):
    """``session.idle``: the agent loop of a user turn ended."""

    hook_event_name: Literal["session.idle"]


class SessionCreatedPayload(_Common):
    """``session.created``: a session was made (``parent_id``: a subagent's)."""

    hook_event_name: Literal["session.created"]
    title: str
    parent_id: NotRequired[str]


class SessionCompactedPayload(_Common):
    """``session.compacted``: OpenCode summarized the session's history."""

    hook_event_name: Literal["session.compacted"]


class FreshStartedPayload(_Common):
    """The plugin's own: it executed a ``prompt`` answer with ``fresh`` and the work
    went on in ``session_id``, created for it, from ``from_session_id``."""

    hook_event_name: Literal["fresh.started"]
    from_session_id: str


OpenCodePayload = (
    ToolBeforePayload
    | ToolAfterPayload
    | ChatMessagePayload
    | StepFinishedPayload
    | SessionIdlePayload
    | SessionCreatedPayload
    | SessionCompactedPayload
    | FreshStartedPayload
)
"""Every payload, told apart by ``hook_event_name``."""


class OpenCodeAnswer(TypedDict, total=False):
    """The one answer the plugin executes, whatever the event (nothing on stdout: nothing
    to do). Each part is done where the event allows, else left out
    (:meth:`ctxrelay.opencode.host.OpenCodeHost.encode` sends only those)."""

    deny: str
    """``tool.execute.before`` only: thrown, so the tool does not run and the model gets
    this text as the call's error."""
    context: str
    """A note to the model: added to the tool's result (``tool.execute.after``), to the
    user message (``chat.message``), else to the session's next one of either."""
    notice: str
    """A line to the person: a toast in the interactive UI, a stderr line in
    ``opencode run``."""
    prompt: str
    """Send this prompt: into the session (a new turn), or with ``fresh`` into a new
    session (``client.session.create`` + ``promptAsync``) that the UI is moved to."""
    fresh: bool
