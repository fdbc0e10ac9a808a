"""Helpers every subcommand shares: one-sentence errors, JSON output, the console."""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from ctxrelay.budget import BudgetValueError
from ctxrelay.errors import CtxrelayError

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "EXIT_ERROR",
    "EXIT_USAGE",
    "ArgumentParser",
    "console",
    "error",
    "handle_errors",
    "print_json",
]

EXIT_ERROR = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """Raised by :class:`ArgumentParser` instead of exiting, so ``main`` returns a code."""


class ArgumentParser(argparse.ArgumentParser):
    """An argparse parser that reports bad usage in one line and never calls ``sys.exit``
    from inside a library call (``--help`` still prints and returns 0 via SystemExit)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def error(message: str, code: int = EXIT_ERROR) -> int:
    """Print one clear sentence on stderr and return ``code``."""
    sys.stderr.write(f"ctxrelay: error: {message}\n")
    return code


def handle_errors(func: Callable[[Sequence[str]], int]) -> Callable[[Sequence[str]], int]:
    """Turn expected errors into one line on stderr and a non-zero exit, never a traceback."""

    @functools.wraps(func)
    def wrapper(argv: Sequence[str]) -> int:
        try:
            return func(argv)
        except SystemExit as exc:  # --help / --version from argparse
            return exc.code if isinstance(exc.code, int) else 0
        except UsageError as exc:
            sys.stderr.write(f"{exc}\n")
            return EXIT_USAGE
        except BudgetValueError as exc:
            return error(f"{exc}", EXIT_USAGE)
        except CtxrelayError as exc:
            return error(str(exc))
        except KeyboardInterrupt:
            sys.stderr.write("ctxrelay: interrupted\n")
            return 130

    return wrapper


def print_json(value: Any) -> None:
    """Print one JSON document (``--json`` output prints nothing else on stdout)."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def console(stderr: bool = False) -> Console:
    """A rich console; imported lazily because hooks must not pay for rich."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)
