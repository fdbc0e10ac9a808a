"""The CLI's argparse parser: bad usage is one line and an exit code, never ``sys.exit``
from inside a library call; ``--help`` wraps at the terminal's width (``COLUMNS`` in a
pipe), never wider."""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

from ctxrelay.cli._wrap import wrap_help

__all__ = ["ArgumentParser", "HelpFormatter", "UsageError"]


class UsageError(Exception):
    """Raised by :class:`ArgumentParser` instead of exiting, so ``main`` returns a code."""


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter for descriptions laid out by hand: kept as written where they
    fit, wrapped (:func:`wrap_help`) where they do not."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return wrap_help(text, width - len(indent), indent)


class ArgumentParser(argparse.ArgumentParser):
    """An argparse parser that reports bad usage in one line and never calls ``sys.exit``
    from inside a library call (``--help`` still prints and returns 0 via SystemExit).
    Its help wraps at the terminal's width (:class:`HelpFormatter`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("formatter_class") in (None, argparse.RawDescriptionHelpFormatter):
            kwargs["formatter_class"] = HelpFormatter
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")
