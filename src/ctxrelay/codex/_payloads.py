"""The hook payloads Codex sends on stdin, and the answers its hooks print, as
``TypedDict`` s: the Codex host's wire contract (``docs/codex-facts.md``, "Events and
payloads", from real captures of Codex 0.171).

Annotations only: the handlers import this module under ``TYPE_CHECKING``. A payload is
still untrusted input: the handlers check every value's type before they use it and
fail open on anything else.
"""

# No ``from __future__ import annotations``: ``NotRequired`` must be seen at run time for
# ``__required_keys__`` (Python 3.11 does not read it from a string).
from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "CodexAnswer",
    "CodexPayload",
    "HookSpecificOutput",
    "PostCompactPayload",
    "PostToolUsePayload",
    "PreToolUsePayload",
    "SessionStartPayload",
    "StopPayload",
]


class _Common(TypedDict):
    session_id: str
    """The thread id."""
    transcript_path: str
    """The thread's rollout file (absolute)."""
    cwd: str
    model: NotRequired[str]
    permission_mode: NotRequired[str]
    turn_id: NotRequired[str]
    agent_id: NotRequired[str]
    """Set in a subagent's hooks."""


class SessionStartPayload(_Common):
    """``SessionStart``: right before a thread's first prompt; ``source`` is ``startup``,
    ``resume`` or ``clear``."""

    hook_event_name: Literal["SessionStart"]
    source: str


class PreToolUsePayload(_Common):
    """``PreToolUse``: before a tool runs; the answer may deny it."""

    hook_event_name: Literal["PreToolUse"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: NotRequired[str]


class PostToolUsePayload(_Common):
    """``PostToolUse``: after a tool ran; ``tool_response`` is the raw output string."""

    hook_event_name: Literal["PostToolUse"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: NotRequired[str]
    tool_response: NotRequired[object]


class StopPayload(_Common):
    """``Stop``: the turn ended; a block continues the same turn, once."""

    hook_event_name: Literal["Stop"]
    stop_hook_active: bool
    last_assistant_message: NotRequired[str]


class PostCompactPayload(_Common):
    """``PostCompact``: a compaction replaced the thread's history."""

    hook_event_name: Literal["PostCompact"]


CodexPayload = (
    SessionStartPayload | PreToolUsePayload | PostToolUsePayload | StopPayload | PostCompactPayload
)
"""Every payload ctxrelay answers, told apart by ``hook_event_name``."""


class HookSpecificOutput(TypedDict):
    hookEventName: str
    permissionDecision: NotRequired[Literal["deny"]]
    permissionDecisionReason: NotRequired[str]
    additionalContext: NotRequired[str]


class CodexAnswer(TypedDict, total=False):
    """What a hook prints on stdout (nothing at all when it has nothing to say)."""

    hookSpecificOutput: HookSpecificOutput
    decision: Literal["block"]
    reason: str
