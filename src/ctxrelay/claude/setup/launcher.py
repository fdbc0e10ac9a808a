"""The commands ``ctxrelay claude install`` writes: this environment's ctxrelay, by
absolute path, started the way every Python tool starts, so the hooks work whatever
``PATH`` Claude Code sees and import what this environment has installed (the
``guard`` extra's parser with them).

The hook commands, in the order install tries them:

1. the ``ctxrelay-hook`` console script, by absolute path (where this environment has
   one);
2. ``python -I -m ctxrelay.claude.hook`` (:func:`module_hook`): this environment's
   interpreter, isolated (``-I``: no current directory on ``sys.path``, so a file in
   the user's project cannot shadow a module; no ``PYTHON*`` variables, no user site),
   which keeps ``site`` and so the environment's ``site-packages`` and ``.pth`` files
   (an editable install's path among them).

Neither builds ``sys.path`` by hand or leaves out ``site`` (``-S``): an earlier version
did, which left out ``site-packages`` and with it tree-sitter, so every command that
needs the parser (``cd app && cat big.txt``, ``cat "big.txt"``) was let through.
Install keeps the first command that answers real payloads, one of them a command only
the parser can judge (:func:`ctxrelay.claude.setup.probe.check_hook`). The statusline and the
handoff skill run the ``ctxrelay`` console script of this environment (else
``python -m ctxrelay``).
"""

from __future__ import annotations

import os
import shlex
import sys
import sysconfig
from pathlib import Path

__all__ = [
    "HOOK_MODULE",
    "ctxrelay_command",
    "hook_candidates",
    "module_hook",
    "python",
    "scripts_dir",
]

HOOK_MODULE = "ctxrelay.claude.hook"
"""The module Claude Code's hook runs (``ctxrelay-hook`` is its console script)."""


def python() -> Path:
    """This environment's interpreter, as it was started (a venv's ``bin/python`` is
    not resolved to the base interpreter it links to: that would leave the venv)."""
    return Path(os.path.abspath(sys.executable))


def scripts_dir() -> Path:
    """Where this environment's console scripts are (``<venv>/bin``)."""
    return Path(sysconfig.get_path("scripts"))


def module_hook(module: str) -> str:
    """``module`` run by this environment's interpreter, isolated: ``python -I -m``."""
    return f"{shlex.quote(str(python()))} -I -m {module}"


def hook_candidates() -> list[str]:
    """The hook commands of this environment, in the order install tries them: the
    console script where there is one, then :func:`module_hook`."""
    found: list[str] = []
    script = scripts_dir() / "ctxrelay-hook"
    if script.is_file() and os.access(script, os.X_OK):
        found.append(shlex.quote(str(script)))
    found.append(module_hook(HOOK_MODULE))
    return found


def ctxrelay_command() -> str:
    """This environment's ``ctxrelay`` command: its console script, else ``python -m``."""
    script = scripts_dir() / "ctxrelay"
    if script.is_file() and os.access(script, os.X_OK):
        return shlex.quote(str(script))
    return f"{shlex.quote(str(python()))} -m ctxrelay"
