"""PreToolUse: the guards against printing files into the context.

Bash goes to :mod:`ctxrelay.claude.guard.bash`, Read to :mod:`ctxrelay.claude.guard.read`.
A denial is the core's ``Answer(deny=…)``, which Claude Code gets as
``permissionDecision: "deny"``; its reason reaches the acting agent as the tool result.
Before them, the usable-limit check (:mod:`ctxrelay.claude._limit`) weighs the context
plus the most the call can return: a Read's lines (its size is known; a Read the Read
guard denies for the room returns nothing), a Bash output's cap (Claude Code's); other
tools count nothing.
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
    # At the usable limit, or past it with what this call can return: hand off now.
    command: str | None = None
    measured: read.Measured | None = None
    left: int | None = None
    returns = 0
    if tool == "Bash":
        command = tool_input.get("command")
        if not isinstance(command, str):
            raise _bad("tool_input.command", "a string")
        returns = bash.result_tokens(_cwd(payload))
    elif tool == "Read":
        file_path = tool_input.get("file_path")
        if not isinstance(file_path, str):
            raise _bad("tool_input.file_path", "a string")
        measured = read.measure(tool_input, _cwd(payload))
        left = None if measured is None else read.over_room(measured, payload)
        # A Read over its share of the room is denied below with a page that fits: it
        # returns nothing to weigh here.
        returns = 0 if measured is None or left is not None else measured.tokens
    reason = limit_reason(payload, returns)
    if reason:
        return Answer(deny=reason)
    if command is not None:
        reason = bash.deny_reason(command, _cwd(payload), payload)
    elif measured is not None:
        reason = read.judge(measured, tool_input, payload, left)
    return Answer(deny=reason) if reason else None
