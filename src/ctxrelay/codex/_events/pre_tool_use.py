"""PreToolUse on Codex's shell: deny a command that would pour a big file into the
context, or print again a file already in it (:mod:`ctxrelay.codex.guard`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ctxrelay.codex.guard import deny_reason
from ctxrelay.hooks.host import Answer

if TYPE_CHECKING:
    from ctxrelay.codex._payloads import PostToolUsePayload, PreToolUsePayload

__all__ = ["command_of", "handle"]


def command_of(payload: PreToolUsePayload | PostToolUsePayload) -> tuple[str, str] | None:
    """The shell command of a ``Bash`` call and the directory it runs in; ``None`` for
    any other tool or a payload without them."""
    if payload.get("tool_name") != "Bash":
        return None
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    cwd = payload.get("cwd")
    if not isinstance(command, str) or not isinstance(cwd, str) or not os.path.isabs(cwd):
        return None
    return command, cwd


def handle(payload: PreToolUsePayload) -> Answer | None:
    call = command_of(payload)
    if call is None:
        return None
    reason = deny_reason(call[0], call[1], payload)
    return Answer(deny=reason) if reason else None
