"""The CLI's argparse parser, in its own module so that ``argparse`` (with ``gettext``,
``locale`` and ``shutil`` behind it) loads only for a command that parses options:
:mod:`ctxrelay.cli._common` hands it out on first use, and ``ctxrelay analyze --json``
over plain paths never needs it."""

from __future__ import annotations

import argparse
from typing import NoReturn

from ctxrelay.cli._common import UsageError

__all__ = ["ArgumentParser"]


class ArgumentParser(argparse.ArgumentParser):
    """An argparse parser that reports bad usage in one line and never calls ``sys.exit``
    from inside a library call (``--help`` still prints and returns 0 via SystemExit)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")
