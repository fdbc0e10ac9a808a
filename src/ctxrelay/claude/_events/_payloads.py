"""The hook payloads Claude Code sends on stdin, and the answers the hooks print, as
``TypedDict`` s: the wire contract the handlers are typed against.

Annotations only: the handlers import this module under ``TYPE_CHECKING``. The fields
are the ones Claude Code 2.1 sends (a real capture of every event is in the test
corpus); the ones older versions or some paths leave out are ``NotRequired``. A payload
is still untrusted input: the handlers check every value's type before they use it and
fail open on anything else.
"""

# No ``from __future__ import annotations``: ``NotRequired`` must be seen at run time for
# ``__required_keys__`` (Python 3.11 does not read it from a string).
from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "HookAnswer",
    "HookPayload",
    "HookSpecificOutput",
    "PostToolUsePayload",
    "PreToolUsePayload",
    "SessionStartPayload",
    "StopPayload",
    "SubagentStopPayload",
    "ToolPayload",
    "UserPromptSubmitPayload",
]


class HookPayload(TypedDict):
    """The fields of every event."""

    session_id: str
    transcript_path: str
    """The main session's transcript, also in a subagent's hooks."""
    cwd: str
    hook_event_name: str
    permission_mode: NotRequired[str]
    prompt_id: NotRequired[str]
    effort: NotRequired[dict[str, object]]
    agent_id: NotRequired[str]
    """Set in a subagent's hooks (its own transcript is beside the main one)."""
    agent_type: NotRequired[str]


class ToolPayload(HookPayload):
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: NotRequired[str]
    """The id of the ``tool_use`` block that made this call (see
    :func:`ctxrelay.transcripts.call_response`)."""


class PreToolUsePayload(ToolPayload):
    """``PreToolUse``: before a tool runs; the answer may deny it."""


class PostToolUsePayload(ToolPayload):
    """``PostToolUse``: after a tool ran; the answer may add context to its result."""

    tool_response: NotRequired[object]
    duration_ms: NotRequired[int]


class StopPayload(HookPayload):
    """``Stop``: the main thread's turn ended."""

    stop_hook_active: bool
    last_assistant_message: NotRequired[str]
    background_tasks: NotRequired[list[object]]
    session_crons: NotRequired[list[object]]


class SubagentStopPayload(StopPayload):
    """``SubagentStop``: a subagent ended (not fired when it stops at ``maxTurns``)."""

    agent_transcript_path: NotRequired[str]


class SessionStartPayload(HookPayload):
    """``SessionStart``: ``source`` is ``startup``, ``resume``, ``clear`` or ``compact``."""

    source: str
    model: NotRequired[str]


class UserPromptSubmitPayload(HookPayload):
    """``UserPromptSubmit``: a prompt (or a ``<task-notification>``) starts a turn."""

    prompt: str


class HookSpecificOutput(TypedDict):
    hookEventName: str
    permissionDecision: NotRequired[Literal["allow", "deny", "ask"]]
    permissionDecisionReason: NotRequired[str]
    additionalContext: NotRequired[str]


class HookAnswer(TypedDict, total=False):
    """What a hook prints on stdout (nothing at all when it has nothing to say)."""

    hookSpecificOutput: HookSpecificOutput
    decision: Literal["block"]
    reason: str
    systemMessage: str
