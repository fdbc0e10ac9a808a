"""The hook payloads the Gemini CLI sends on stdin, and the answers its hooks print, as
``TypedDict`` s: the Gemini host's wire contract (``docs/gemini-facts.md``, "Payloads",
from real captures of the Gemini CLI 0.61.0).

Annotations only: the handlers import this module under ``TYPE_CHECKING``. A payload is
still untrusted input: the handlers check every value's type before they use it and
fail open on anything else.
"""

# No ``from __future__ import annotations``: ``NotRequired`` must be seen at run time.
from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "AfterAgentPayload",
    "AfterToolPayload",
    "BeforeAgentPayload",
    "BeforeToolPayload",
    "GeminiAnswer",
    "GeminiPayload",
    "HookSpecificOutput",
    "SessionStartPayload",
]


class _Common(TypedDict):
    session_id: str
    transcript_path: str
    """The session file (``~/.gemini/tmp/<project>/chats/session-….jsonl``), absolute."""
    cwd: str
    timestamp: NotRequired[str]


class SessionStartPayload(_Common):
    """``SessionStart``: ``source`` is ``startup``, ``resume`` or ``clear``."""

    hook_event_name: Literal["SessionStart"]
    source: str


class BeforeAgentPayload(_Common):
    """``BeforeAgent``: a prompt starts a turn (also the prompt an ``AfterAgent`` deny
    continues with)."""

    hook_event_name: Literal["BeforeAgent"]
    prompt: str


class BeforeToolPayload(_Common):
    """``BeforeTool``: before a tool runs; a deny answer stops it."""

    hook_event_name: Literal["BeforeTool"]
    tool_name: str
    tool_input: dict[str, Any]


class AfterToolPayload(_Common):
    """``AfterTool``: a tool ran; ``tool_response`` holds ``llmContent`` and
    ``returnDisplay``."""

    hook_event_name: Literal["AfterTool"]
    tool_name: str
    tool_input: dict[str, Any]
    tool_response: NotRequired[object]


class AfterAgentPayload(_Common):
    """``AfterAgent``: the main agent's turn ended; a deny continues it with ``reason``
    as the next prompt (with ``clearContext``, in a fresh context)."""

    hook_event_name: Literal["AfterAgent"]
    prompt: str
    prompt_response: NotRequired[str]
    stop_hook_active: bool


GeminiPayload = (
    SessionStartPayload
    | BeforeAgentPayload
    | BeforeToolPayload
    | AfterToolPayload
    | AfterAgentPayload
)
"""Every payload ctxrelay answers, told apart by ``hook_event_name``."""


class HookSpecificOutput(TypedDict, total=False):
    hookEventName: str
    additionalContext: str
    clearContext: bool


class GeminiAnswer(TypedDict, total=False):
    """What a hook prints on stdout (nothing at all when it has nothing to say)."""

    decision: Literal["deny"]
    reason: str
    systemMessage: str
    hookSpecificOutput: HookSpecificOutput
