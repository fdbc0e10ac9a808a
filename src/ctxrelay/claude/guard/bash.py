"""The Bash guard: deny a command whose file prints Claude Code would hand the model
whole and big.

Which parts of a command print which file is the core's reading
(:func:`ctxrelay.hooks.guard.prints.classify`); how many bytes that is, and whether
Claude Code would cap it, is :mod:`ctxrelay.hooks.guard.output`'s. Claude Code hands a
Bash output up to its cap (``BASH_MAX_OUTPUT_LENGTH``, 4,000 characters once ctxrelay is
installed) to the model whole, and a longer one as a 2 KB preview plus a saved file: so
under the installed cap no print is denied, and under a larger one only a print over
:data:`~ctxrelay.budget.bounds.PRINT_BIG_BYTES` that stays under the cap. The reason
offers a Read call of one page of each file. A command that does not parse is allowed:
the guard never blocks what it cannot understand. Rules and examples: ``docs/guard.md``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ctxrelay.budget.bounds import (
    CLAUDE_CODE_BASH_OUTPUT_DEFAULT,
    CLAUDE_CODE_BASH_OUTPUT_RANGE,
    CLAUDE_CODE_BASH_PREVIEW_BYTES,
)
from ctxrelay.claude.guard._reads import reason
from ctxrelay.hooks.guard.output import HostOutput, printed_bytes, sized
from ctxrelay.hooks.guard.prints import classify

__all__ = ["deny_reason", "host_output"]


def host_output(env: Mapping[str, str] = os.environ) -> HostOutput:
    """What Claude Code hands the model of a Bash output: whole up to its cap, which the
    hook reads where Claude Code does (``BASH_MAX_OUTPUT_LENGTH`` in its environment,
    which the settings' ``env`` reaches), clamped as Claude Code clamps it."""
    raw = env.get("BASH_MAX_OUTPUT_LENGTH", "").strip()
    low, high = CLAUDE_CODE_BASH_OUTPUT_RANGE
    cap = min(max(int(raw), low), high) if raw.isdigit() else CLAUDE_CODE_BASH_OUTPUT_DEFAULT
    label = f"Claude Code hands you a Bash output of up to {cap:,} characters whole"
    return HostOutput(label, cap, CLAUDE_CODE_BASH_PREVIEW_BYTES)


def deny_reason(
    command: str, cwd: str | None, payload: Mapping[str, object] | None = None
) -> str | None:
    """The reason to deny ``command``, with a page of each file to read instead; ``None``
    to allow it. ``payload`` is the hook's (unused by this rule; kept for the handler's
    one signature of the guards)."""
    del payload
    prints = classify(command, cwd)
    if not prints:
        return None
    files = sized(prints)
    host = host_output()
    if not host.floods(printed_bytes(files)):
        return None
    return reason(prints, files, host)
