"""The commands install writes, for every host: this environment's ctxrelay, by absolute
path, started the way every Python tool starts, so a hook works whatever ``PATH`` its
host sees and imports what this environment has installed (the ``guard`` extra's
parser with it).

A hook command is, in the order install tries them (:func:`hook_candidates`):

1. the host's console script (``ctxrelay-hook``), by absolute path, where this
   environment has one;
2. ``python -I -m <module>`` (:func:`module_hook`): this environment's interpreter,
   isolated (``-I``: no current directory on ``sys.path``, so a file in the user's
   project cannot shadow a module; no ``PYTHON*`` variables, no user site), which keeps
   ``site`` and so the environment's ``site-packages`` and ``.pth`` files (an editable
   install's path among them).

Neither builds ``sys.path`` by hand or leaves out ``site`` (``-S``): the older layout
did (``python -I -S -c 'import sys; sys.path.append(…); from <module> import run;
run()'``, :func:`older_layout`), which left out ``site-packages`` and with it the
parser. Such a command still runs (its module keeps ``run``), is still known as
ctxrelay's (:func:`runs_hook`), and ``install`` replaces it. Install keeps the first
command that works (:func:`choose_hook`).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import sysconfig
from collections.abc import Callable, Sequence
from pathlib import Path

from ctxrelay.errors import ConfigError
from ctxrelay.hooks.install.probe import NO_PARSER, Check

__all__ = [
    "REINSTALL_GUARD",
    "choose_hook",
    "console_script",
    "ctxrelay_command",
    "hook_candidates",
    "module_hook",
    "older_layout",
    "older_layout_note",
    "python",
    "runs_hook",
    "scripts_dir",
]


def python() -> Path:
    """This environment's interpreter, as it was started (a venv's ``bin/python`` is
    not resolved to the base interpreter it links to: that would leave the venv)."""
    return Path(os.path.abspath(sys.executable))


def scripts_dir() -> Path:
    """Where this environment's console scripts are (``<venv>/bin``)."""
    return Path(sysconfig.get_path("scripts"))


def console_script(name: str) -> str | None:
    """This environment's console script ``name``, quoted for the shell, where there is
    one that can run."""
    script = scripts_dir() / name
    if script.is_file() and os.access(script, os.X_OK):
        return shlex.quote(str(script))
    return None


def module_hook(module: str) -> str:
    """``module`` run by this environment's interpreter, isolated: ``python -I -m``."""
    return f"{shlex.quote(str(python()))} -I -m {module}"


def hook_candidates(module: str, script: str | None = None) -> list[str]:
    """The hook commands of this environment, in the order install tries them: the
    console script ``script`` where there is one, then :func:`module_hook`."""
    found = [] if script is None else [console_script(script)]
    return [c for c in found if c is not None] + [module_hook(module)]


def ctxrelay_command() -> str:
    """This environment's ``ctxrelay`` command: its console script, else ``python -m``."""
    return console_script("ctxrelay") or f"{shlex.quote(str(python()))} -m ctxrelay"


def _words(command: object) -> list[str]:
    """A command's words as the shell splits them; none for what is not one."""
    try:
        return shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return []


def runs_hook(command: object, module: str, script: str | None = None) -> bool:
    """Whether ``command`` runs ctxrelay's hook ``module``, in any form an install of
    ctxrelay wrote: ``python -I -m module``, the older layout's ``… from module import
    run; run()``, or the console script ``script`` (by name or by path)."""
    if not isinstance(command, str):
        return False
    if re.search(rf"(?<![\w.]){re.escape(module)}(?![\w.])", command):
        return True
    words = _words(command)
    return script is not None and bool(words) and os.path.basename(words[0]) == script


def older_layout(command: object) -> bool:
    """Whether ``command`` is a hook as the older layout wrote it: ``python -I -S -c``
    with ``sys.path`` built by hand (no ``site``, so no ``site-packages``)."""
    words = _words(command)
    return "-S" in words[1:] and "-c" in words[1:] and "sys.path" in str(command)


def older_layout_note(where: Path, install: str) -> str:
    """The one sentence for hooks in ``where`` that the older layout wrote: ``install``
    (the host's install command) upgrades them."""
    return (
        f"the hooks in {where} were installed by an older ctxrelay (python -I -S -c, which "
        f"leaves site-packages and so the guard's parser out); '{install}' upgrades them"
    )


REINSTALL_GUARD = "pipx install '.[guard]' in a clone of its repository"
"""How to reinstall ctxrelay with the guard's parser, for a host with no extra of its own
(Codex, the Gemini CLI)."""


def choose_hook(
    given: str | None,
    candidates: Sequence[str],
    check: Callable[[str], Check],
    *,
    reinstall: str,
) -> str:
    """The hook command to install: ``given`` (``--command``) when it works, else the
    first of this environment's ``candidates`` whose ``check`` passes. A command that
    does not work is a :class:`ConfigError` saying what to do, and the caller writes
    nothing: a hook without the parser would be a guard that lets most commands through.
    ``reinstall`` says how to reinstall ctxrelay for this host."""
    if given is not None:
        found = check(given)
        if not found.ok:
            raise ConfigError(
                f"the hook command {given!r} does not work ({found.detail}); fix it, or "
                "leave out --command to use this environment's ctxrelay"
            )
        return given
    tried: list[str] = []
    for candidate in candidates:
        found = check(candidate)
        if found.ok:
            return candidate
        tried.append(found.detail)
    why = tried[0] if tried else "no hook command found"
    if NO_PARSER in why:
        raise ConfigError(
            f"this environment's ctxrelay hook works only in part, nothing was written: {why}"
        )
    raise ConfigError(
        f"this environment cannot run ctxrelay's hook ({why}); reinstall ctxrelay "
        f"({reinstall}) and run install with that ctxrelay, or pass --command with a hook "
        "command that works"
    )
