"""Commands a message suggests, spelled so they run as shown.

After ``make setup`` the ``ctxrelay`` command lives in ``.venv/bin`` and is usually not on
``PATH``: a message that says "run ``ctxrelay sessions show ID``" would fail when pasted.
:func:`ctxrelay_command` is the one place that decides how to spell the command:
``ctxrelay`` when that name on ``PATH`` is the program running now, else the path of the
running environment's ``ctxrelay`` (relative to the current directory when inside it),
else ``python -m ctxrelay`` with this interpreter.

The CLI's dispatcher imports this module for its unknown-command hint, and every command
(``ctxrelay claude statusline`` after each message, too) imports the dispatcher: so this
module keeps to ``os.path`` (no ``pathlib``), and :func:`on_path` is ``shutil.which``
without ``shutil`` (whose import probes three compression modules).
"""

from __future__ import annotations

import os
import shlex
import sys

__all__ = ["ctxrelay_command", "on_path", "suggest"]


def on_path(name: str) -> str | None:
    """The program a shell runs for a bare ``name``: the first executable file of that
    name in a ``PATH`` folder (``shutil.which(name)`` on POSIX), or ``None``."""
    for folder in os.get_exec_path():
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def ctxrelay_command() -> str:
    """How to spell ``ctxrelay`` in a suggested command line."""
    here = os.path.join(os.path.dirname(sys.executable), "ctxrelay")
    found = on_path("ctxrelay")
    if not os.path.exists(here):
        return "ctxrelay" if found else f"{shlex.quote(sys.executable)} -m ctxrelay"
    if found is not None and os.path.realpath(found) == os.path.realpath(here):
        return "ctxrelay"
    try:
        shown = os.path.relpath(here)
    except ValueError:  # another drive on Windows
        shown = here
    if shown.startswith(".."):
        shown = here
    elif os.sep not in shown:  # a bare name would be looked up on PATH
        shown = f".{os.sep}{shown}"
    return shlex.quote(shown)


def suggest(*args: str) -> str:
    """``ctxrelay ARGS…`` as the user can paste it: the command spelled by
    :func:`ctxrelay_command`, each argument quoted for a POSIX shell where needed."""
    return " ".join([ctxrelay_command(), *(shlex.quote(a) for a in args)])
