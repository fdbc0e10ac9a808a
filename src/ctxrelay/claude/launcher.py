"""The commands ``ctxrelay claude install`` writes: this environment's ctxrelay, by
absolute path, started the fastest way, so the hooks work whatever ``PATH`` Claude Code
sees.

The hook runs on every tool call, so how it starts matters (``bench/hooks.py``
measures each way against a bare ``python -c pass`` of the same interpreter):

1. :func:`isolated_hook` — the interpreter itself, ``-I -S`` (no ``site``: no ``.pth``
   files processed, no user site, no ``PYTHON*`` variables, no current directory on
   ``sys.path``), with the directory ctxrelay is imported from appended to ``sys.path``.
   It does not depend on which pip wrote the console script (an older pip's script
   imports ``re``) and is the fastest of the three;
2. the ``ctxrelay-hook`` console script, by absolute path;
3. ``python -m ctxrelay.claude.hook`` (through ``runpy``).

Install tries them in that order and keeps the first that answers a real payload
(:func:`ctxrelay.claude.probe.check_hook`). The statusline and the handoff skill run
the ``ctxrelay`` console script of this environment (else ``python -m ctxrelay``).
"""

from __future__ import annotations

import os
import shlex
import sys
import sysconfig
from pathlib import Path

import ctxrelay

__all__ = [
    "ctxrelay_command",
    "hook_candidates",
    "isolated_hook",
    "package_root",
    "python",
    "scripts_dir",
]


def python() -> Path:
    """This environment's interpreter, as it was started (a venv's ``bin/python`` is
    not resolved to the base interpreter it links to: that would leave the venv)."""
    return Path(os.path.abspath(sys.executable))


def package_root() -> Path:
    """The directory ``ctxrelay`` is imported from (``site-packages``, or a clone's
    ``src`` for an editable install)."""
    return Path(os.path.abspath(ctxrelay.__file__)).parent.parent


def scripts_dir() -> Path:
    """Where this environment's console scripts are (``<venv>/bin``)."""
    return Path(sysconfig.get_path("scripts"))


def isolated_hook(interpreter: Path, root: Path) -> str:
    """The hook started by ``interpreter -I -S`` with ``root`` on ``sys.path`` (after
    the standard library, so nothing there can shadow it)."""
    where = str(root)
    # A double-quoted literal reads best inside the shell's single quotes.
    literal = repr(where) if set(where) & {'"', "'", "\\"} else f'"{where}"'
    code = f"import sys; sys.path.append({literal}); from ctxrelay.claude.hook import run; run()"
    return f"{shlex.quote(str(interpreter))} -I -S -c {shlex.quote(code)}"


def hook_candidates() -> list[str]:
    """The hook commands of this environment, fastest first."""
    interpreter = python()
    found = [isolated_hook(interpreter, package_root())]
    script = scripts_dir() / "ctxrelay-hook"
    if script.is_file() and os.access(script, os.X_OK):
        found.append(shlex.quote(str(script)))
    found.append(f"{shlex.quote(str(interpreter))} -m ctxrelay.claude.hook")
    return found


def ctxrelay_command() -> str:
    """This environment's ``ctxrelay`` command: its console script, else ``python -m``."""
    script = scripts_dir() / "ctxrelay"
    if script.is_file() and os.access(script, os.X_OK):
        return shlex.quote(str(script))
    return f"{shlex.quote(str(python()))} -m ctxrelay"
