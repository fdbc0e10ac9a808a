"""The hook command ``ctxrelay codex install`` writes: this environment's interpreter
by absolute path, so the hook works whatever ``PATH`` Codex sees.

Codex starts a hook command through the shell (its quoting holds: verified on 0.171.0,
``docs/codex-facts.md``), like Claude Code, so the ways to start ctxrelay are the Claude
host's (:mod:`ctxrelay.claude.launcher`): the interpreter isolated (``-I -S``, ctxrelay's
import root appended to ``sys.path``), else ``python -m``. Install keeps the first that
answers a real payload (:func:`ctxrelay.codex.probe.check_hook`).
"""

from __future__ import annotations

import shlex

from ctxrelay.claude.launcher import package_root, python

__all__ = ["HOOK_MODULE", "hook_candidates", "is_ours"]

HOOK_MODULE = "ctxrelay.codex.hook"
"""The module every installed command runs; how install, uninstall and doctor know a
hook of ctxrelay's in a ``hooks.json`` shared with the user's own."""


def hook_candidates() -> list[str]:
    """The hook commands of this environment, fastest first."""
    interpreter = shlex.quote(str(python()))
    where = str(package_root())
    literal = repr(where) if set(where) & {'"', "'", "\\"} else f'"{where}"'
    code = f"import sys; sys.path.append({literal}); from {HOOK_MODULE} import run; run()"
    return [f"{interpreter} -I -S -c {shlex.quote(code)}", f"{interpreter} -m {HOOK_MODULE}"]


def is_ours(command: object) -> bool:
    """Whether a hook command runs ctxrelay's Codex hook."""
    return isinstance(command, str) and HOOK_MODULE in command
