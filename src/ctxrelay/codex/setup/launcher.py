"""The hook command ``ctxrelay codex install`` writes: the core's launcher
(:mod:`ctxrelay.hooks.install.launch`) for Codex's hook, ``python -I -m
ctxrelay.codex.hook`` by this environment's interpreter, so the hook works whatever
``PATH`` Codex sees and imports the environment's ``site-packages`` (the ``guard``
extra's parser).

Codex starts a hook command through the shell (its quoting holds: verified on 0.171.0,
``docs/codex-facts.md``), like Claude Code. There is no console script for it:
``bench/hooks.py`` measures ``python -I -m`` within a millisecond or two of the Claude
hook's console script. Install keeps the command once it answers real payloads, one of
them a command only the parser can judge (:func:`ctxrelay.codex.setup.probe.check_hook`).
"""

from __future__ import annotations

from ctxrelay.hooks.install import launch

__all__ = ["HOOK_MODULE", "hook_candidates", "is_ours"]

HOOK_MODULE = "ctxrelay.codex.hook"
"""The module every installed command runs; how install, uninstall and doctor know a
hook of ctxrelay's in a ``hooks.json`` shared with the user's own (this version's
``python -I -m ctxrelay.codex.hook`` and an older layout's ``python -I -S -c '… from
ctxrelay.codex.hook import run; run()'`` alike)."""


def hook_candidates() -> list[str]:
    """The hook commands of this environment, in the order install tries them."""
    return launch.hook_candidates(HOOK_MODULE)


def is_ours(command: object) -> bool:
    """Whether a hook command runs ctxrelay's Codex hook."""
    return launch.runs_hook(command, HOOK_MODULE)
