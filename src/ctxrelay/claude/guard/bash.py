"""The Bash guard: deny a command that prints a file into the context.

Which parts of a command print which file is the core's reading
(:func:`ctxrelay.hooks.guard.prints.classify`); the deny reason names the Read call that
shows the same file and range. A command that does not parse is allowed: the guard never
blocks what it cannot understand. Rules and examples: ``docs/guard.md``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ctxrelay.claude.guard._reads import reason
from ctxrelay.hooks.guard.prints import classify

__all__ = ["deny_reason"]


def deny_reason(
    command: str, cwd: str | None, payload: Mapping[str, object] | None = None
) -> str | None:
    """The reason to deny ``command``, with the Read calls to use; ``None`` to allow it.
    With the hook's ``payload``, a Read call of a whole file the agent already read in
    full (and which would be denied as a repeat) says so."""
    prints = classify(command, cwd)
    if not prints:
        return None
    return reason(prints, payload)
