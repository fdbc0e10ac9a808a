"""Commands a message suggests, spelled so they run as shown.

After ``make setup`` the ``ctxrelay`` command lives in ``.venv/bin`` and is usually not on
``PATH``: a message that says "run ``ctxrelay sessions show ID``" would fail when pasted.
:func:`ctxrelay_command` is the one place that decides how to spell the command:
``ctxrelay`` when that name on ``PATH`` is the program running now, else the path of the
running environment's ``ctxrelay`` (relative to the current directory when inside it),
else ``python -m ctxrelay`` with this interpreter.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

__all__ = ["ctxrelay_command", "suggest"]


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def ctxrelay_command() -> str:
    """How to spell ``ctxrelay`` in a suggested command line."""
    here = Path(sys.executable).parent / "ctxrelay"
    found = shutil.which("ctxrelay")
    if not here.exists():
        return "ctxrelay" if found else f"{shlex.quote(sys.executable)} -m ctxrelay"
    if found is not None and _same(Path(found), here):
        return "ctxrelay"
    try:
        shown = os.path.relpath(here)
    except ValueError:  # another drive on Windows
        shown = str(here)
    if shown.startswith(".."):
        shown = str(here)
    elif os.sep not in shown:  # a bare name would be looked up on PATH
        shown = f".{os.sep}{shown}"
    return shlex.quote(shown)


def suggest(*args: str) -> str:
    """``ctxrelay ARGS…`` as the user can paste it: the command spelled by
    :func:`ctxrelay_command`, each argument quoted for a POSIX shell where needed."""
    return " ".join([ctxrelay_command(), *(shlex.quote(a) for a in args)])
