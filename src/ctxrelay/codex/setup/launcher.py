"""The hook command ``ctxrelay codex install`` writes: this environment's interpreter
by absolute path, so the hook works whatever ``PATH`` Codex sees.

Codex starts a hook command through the shell (its quoting holds: verified on 0.171.0,
``docs/codex-facts.md``), like Claude Code, so the hook starts as the Claude host's
second way does (:func:`ctxrelay.claude.setup.launcher.module_hook`): ``python -I -m
ctxrelay.codex.hook``, with ``site`` and so the environment's ``site-packages`` (the
``guard`` extra's parser). There is no console script for it: ``bench/hooks.py``
measures ``python -I -m`` within a millisecond or two of the Claude hook's console script.
Install keeps the command once it answers real payloads, one of them a command only the
parser can judge (:func:`ctxrelay.codex.setup.probe.check_hook`).
"""

from __future__ import annotations

from ctxrelay.claude.setup.launcher import module_hook

__all__ = ["HOOK_MODULE", "hook_candidates", "is_ours"]

HOOK_MODULE = "ctxrelay.codex.hook"
"""The module every installed command runs; how install, uninstall and doctor know a
hook of ctxrelay's in a ``hooks.json`` shared with the user's own (this version's
``python -I -m ctxrelay.codex.hook`` and an earlier one's ``python -I -S -c '… from
ctxrelay.codex.hook import run; run()'`` alike)."""


def hook_candidates() -> list[str]:
    """The hook commands of this environment, in the order install tries them."""
    return [module_hook(HOOK_MODULE)]


def is_ours(command: object) -> bool:
    """Whether a hook command runs ctxrelay's Codex hook."""
    return isinstance(command, str) and HOOK_MODULE in command
