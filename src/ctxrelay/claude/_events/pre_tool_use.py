"""PreToolUse: the guards against printing files into the context.

Bash goes to :mod:`ctxrelay.claude.guard.bash`, Read to :mod:`ctxrelay.claude.guard.read`.
A denial is the core's ``Answer(deny=…)``, which Claude Code gets as
``permissionDecision: "deny"``; its reason reaches the acting agent as the tool result.
Other checks of a tool call (e.g. "deny at the usable limit") belong in :func:`handle`
before the per-tool guards, each returning a reason or ``None``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ctxrelay.claude._limit import deny_reason as limit_reason
from ctxrelay.claude.guard import bash, read
from ctxrelay.errors import HookPayloadError
from ctxrelay.hooks.host import Answer

if TYPE_CHECKING:
    from ctxrelay.claude._events._payloads import PreToolUsePayload

__all__ = ["handle"]


def _bad(field: str, expected: str) -> HookPayloadError:
    """The error for a malformed payload."""
    return HookPayloadError("PreToolUse", field, expected)


def _cwd(payload: PreToolUsePayload) -> str:
    if "cwd" not in payload:
        return os.getcwd()  # Claude Code runs hooks in the project directory
    cwd = payload["cwd"]
    if not isinstance(cwd, str) or not cwd or "\x00" in cwd:
        raise _bad("cwd", "a directory path")
    return os.path.abspath(cwd)


def handle(payload: PreToolUsePayload) -> Answer | None:
    """Deny a tool call that would pour a file into the context; ``None`` allows it."""
    tool = payload.get("tool_name")
    if not isinstance(tool, str):
        raise _bad("tool_name", "a string")
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        raise _bad("tool_input", "an object")
    reason = limit_reason(payload)  # at the usable limit: hand off now (claude2)
    if reason:
        return Answer(deny=reason)
    if tool == "Bash":
        command = tool_input.get("command")
        if not isinstance(command, str):
            raise _bad("tool_input.command", "a string")
        reason = bash.deny_reason(command, _cwd(payload), payload)
    elif tool == "Read":
        file_path = tool_input.get("file_path")
        if not isinstance(file_path, str):
            raise _bad("tool_input.file_path", "a string")
        reason = read.deny_reason(tool_input, _cwd(payload), payload)
    return Answer(deny=reason) if reason else None
