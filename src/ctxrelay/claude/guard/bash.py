"""The Bash guard: deny a command whose file prints Claude Code would hand the model
whole and big.

Which parts of a command print which file is the core's reading
(:func:`ctxrelay.hooks.guard.prints.classify`); how many bytes that is, and whether
Claude Code would cap it, is :mod:`ctxrelay.hooks.guard.output`'s. Claude Code hands a
Bash output up to its cap (the ``bashOutputMaxChars`` setting, else
``BASH_MAX_OUTPUT_LENGTH``, 4,000 characters once ctxrelay is installed) to the model
whole, and a longer one as a 2 KB preview plus a saved file: so under the installed cap
no print is denied, and under a larger one only a print over
:data:`~ctxrelay.budget.bounds.PRINT_BIG_BYTES` that stays under the cap. The reason
offers a Read call of one page of each file. A command that does not parse is allowed:
the guard never blocks what it cannot understand. Rules and examples: ``docs/guard.md``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ctxrelay.budget.bounds import (
    CLAUDE_CODE_BASH_OUTPUT_DEFAULT,
    CLAUDE_CODE_BASH_OUTPUT_RANGE,
    CLAUDE_CODE_BASH_PREVIEW_BYTES,
    CLAUDE_CODE_BASH_SETTING_RANGE,
    READ_BYTES_PER_TOKEN,
)
from ctxrelay.claude._settings import setting
from ctxrelay.claude.config import project_dir_of
from ctxrelay.claude.guard._reads import reason
from ctxrelay.hooks.guard.output import HostOutput, printed_bytes, sized
from ctxrelay.hooks.guard.prints import classify

__all__ = ["SETTING", "deny_reason", "host_output", "result_tokens"]

SETTING = "bashOutputMaxChars"
"""Claude Code's setting for its Bash output cap: when set, it replaces
``BASH_MAX_OUTPUT_LENGTH``."""


def _setting_cap(value: object) -> int | None:
    """The cap a ``bashOutputMaxChars`` value sets, clamped as Claude Code clamps it;
    ``None`` for what its schema refuses (not a positive whole number)."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    low, high = CLAUDE_CODE_BASH_SETTING_RANGE
    return min(max(value, low), high)


def host_output(
    env: Mapping[str, str] = os.environ, project: Path | None = None, home: Path | None = None
) -> HostOutput:
    """What Claude Code hands the model of a Bash output: whole up to its cap, which the
    hook reads where Claude Code does: the ``bashOutputMaxChars`` setting of the first
    settings layer that sets it (:mod:`ctxrelay.claude._settings`), else
    ``BASH_MAX_OUTPUT_LENGTH`` in its environment (which the settings' ``env`` reaches),
    each clamped as Claude Code clamps it."""
    cap = setting(SETTING, _setting_cap, project or project_dir_of(), home or Path.home(), env)
    if cap is None:
        raw = env.get("BASH_MAX_OUTPUT_LENGTH", "").strip()
        low, high = CLAUDE_CODE_BASH_OUTPUT_RANGE
        cap = min(max(int(raw), low), high) if raw.isdigit() else CLAUDE_CODE_BASH_OUTPUT_DEFAULT
    label = f"Claude Code hands you a Bash output of up to {cap:,} characters whole"
    return HostOutput(label, cap, CLAUDE_CODE_BASH_PREVIEW_BYTES)


def result_tokens(cwd: str | None) -> int:
    """The most a Bash call can add to the context, on the safe side: Claude Code's cap
    (a longer output comes as a smaller preview), at
    :data:`~ctxrelay.budget.bounds.READ_BYTES_PER_TOKEN` characters a token."""
    return host_output(project=project_dir_of(cwd)).cap // READ_BYTES_PER_TOKEN


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
    host = host_output(project=project_dir_of(cwd))
    if not host.floods(printed_bytes(files)):
        return None
    return reason(prints, files, host)
