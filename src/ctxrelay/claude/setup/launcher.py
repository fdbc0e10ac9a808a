"""The commands ``ctxrelay claude install`` writes: the core's launchers
(:mod:`ctxrelay.hooks.install.launch`: this environment's ctxrelay, by absolute path,
started the way every Python tool starts) for Claude Code's hook, whose console script
is ``ctxrelay-hook``.

The hook commands, in the order install tries them: the ``ctxrelay-hook`` console
script by absolute path (where this environment has one), then ``python -I -m
ctxrelay.claude.hook``. Install keeps the first command that answers real payloads, one
of them a command only the parser can judge (:func:`ctxrelay.claude.setup.probe.check_hook`).
The statusline and the handoff skill run the ``ctxrelay`` console script of this
environment (else ``python -m ctxrelay``).
"""

from __future__ import annotations

from ctxrelay.hooks.install import launch

__all__ = ["HOOK_MODULE", "HOOK_SCRIPT", "hook_candidates", "is_ours"]

HOOK_MODULE = "ctxrelay.claude.hook"
"""The module Claude Code's hook runs (``ctxrelay-hook`` is its console script)."""

HOOK_SCRIPT = "ctxrelay-hook"
"""The hook's console script."""


def hook_candidates() -> list[str]:
    """The hook commands of this environment, in the order install tries them."""
    return launch.hook_candidates(HOOK_MODULE, HOOK_SCRIPT)


def is_ours(command: object) -> bool:
    """Whether a hook command runs ctxrelay's Claude Code hook: this version's (the
    console script, ``python -I -m``), an older layout's, or the bare ``ctxrelay-hook``
    of the shipped snippet."""
    return launch.runs_hook(command, HOOK_MODULE, HOOK_SCRIPT)
