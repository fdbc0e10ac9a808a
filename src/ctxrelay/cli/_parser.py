"""The CLI's argparse parser: bad usage is one line and an exit code, never ``sys.exit``
from inside a library call."""

from __future__ import annotations

import argparse
from typing import NoReturn

__all__ = ["ArgumentParser", "UsageError"]


class UsageError(Exception):
    """Raised by :class:`ArgumentParser` instead of exiting, so ``main`` returns a code."""


class ArgumentParser(argparse.ArgumentParser):
    """An argparse parser that reports bad usage in one line and never calls ``sys.exit``
    from inside a library call (``--help`` still prints and returns 0 via SystemExit)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")
