"""The hook command ``ctxrelay gemini install`` writes: the core's launcher
(:mod:`ctxrelay.hooks.install.launch`) for the Gemini hook, ``python -I -m
ctxrelay.gemini.hook`` by this environment's interpreter, by absolute path, so the hook
works whatever ``PATH`` the CLI sees and imports the environment's ``site-packages``
(the ``guard`` extra's parser). The Gemini CLI starts a hook command through the shell.
"""

from __future__ import annotations

from ctxrelay.hooks.install import launch

__all__ = ["HOOK_MODULE", "hook_candidates", "is_ours"]

HOOK_MODULE = "ctxrelay.gemini.hook"
"""The module every installed command runs; how install, uninstall and doctor know a
hook of ctxrelay's in a ``settings.json`` shared with the user's own."""


def hook_candidates() -> list[str]:
    """The hook commands of this environment, in the order install tries them."""
    return launch.hook_candidates(HOOK_MODULE)


def is_ours(command: object) -> bool:
    """Whether a hook command runs ctxrelay's Gemini hook."""
    return launch.runs_hook(command, HOOK_MODULE)
