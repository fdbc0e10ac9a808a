"""Helpers every subcommand shares: one-sentence errors, JSON output, the console."""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar, overload

from ctxrelay.budget import BudgetValueError
from ctxrelay.cli._parser import ArgumentParser, UsageError
from ctxrelay.errors import CtxrelayError

if TYPE_CHECKING:
    from rich.console import Console

    from ctxrelay.hooks.install.probe import Check

_Main = TypeVar("_Main", bound=Callable[..., int])

__all__ = [
    "BUDGET_FLAGS",
    "EXIT_ERROR",
    "EXIT_USAGE",
    "ArgumentParser",
    "add_project_dir",
    "budget_error_message",
    "console",
    "error",
    "flag_requirement",
    "handle_errors",
    "numeral_pattern",
    "print_doctor",
    "print_install",
    "print_json",
    "scope_of",
    "scope_parser",
    "shown_value",
]

EXIT_ERROR = 1
EXIT_USAGE = 2


def add_project_dir(parser: argparse.ArgumentParser, *aliases: str) -> None:
    """The ``--project-dir DIR`` option of the host commands (``opts.project_dir``, a
    ``Path`` or ``None`` for the current directory)."""
    parser.add_argument(
        "--project-dir",
        *aliases,
        dest="project_dir",
        type=Path,
        metavar="DIR",
        default=None,
        help="the project (default: the current directory)",
    )


def scope_parser(
    prog: str, description: str, *, project_file: str, user_file: str
) -> ArgumentParser:
    """The options a host's install, uninstall and doctor share: which settings file
    (the project's, the default, or ``--user``'s), which project, ``--json``."""
    parser = ArgumentParser(
        prog=prog, description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--project", action="store_true", help=f"the project's {project_file} (the default)"
    )
    scope.add_argument("--user", action="store_true", help=f"the user's {user_file}")
    add_project_dir(parser)
    parser.add_argument("--json", action="store_true", help="print only JSON")
    return parser


def scope_of(opts: argparse.Namespace) -> tuple[str, Path]:
    """The scope (``project`` or ``user``) and the project directory the options name."""
    return ("user" if opts.user else "project"), (opts.project_dir or Path.cwd()).resolve()


def add_hook_command(parser: argparse.ArgumentParser) -> None:
    """The ``--command CMD`` option of the hosts' ``install`` (``opts.command``, ``None``
    for this environment's own)."""
    parser.add_argument(
        "--command",
        metavar="CMD",
        help="the command every hook runs (default: this environment's ctxrelay, checked first)",
    )


def error(message: str, code: int = EXIT_ERROR) -> int:
    """Print one clear sentence on stderr and return ``code``."""
    sys.stderr.write(f"ctxrelay: error: {message}\n")
    return code


BUDGET_FLAGS: Mapping[str, str] = MappingProxyType(
    {
        "limit": "--limit",
        "output_reserve": "--reserve",
        "threshold": "--threshold",
        "warning_lead": "--warning-lead",
    }
)
"""Budget field -> the flag that sets it, so a core error names what the user typed."""

_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:_[0-9]+)*(?:\.[0-9]*)?|\.[0-9]+)")


def numeral_pattern() -> re.Pattern[str]:
    """The pattern of a numeral a command accepts: plain ASCII numerals only.
    ``int()``/``float()`` also take "nan", "1e999" and digits of other scripts, which a
    budget never needs and which would be shown back confusingly."""
    return _NUMBER


def shown_value(value: object) -> str:
    """A value as an error message shows it: numbers bare (``101``, not ``101.0``),
    anything else quoted."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and numeral_pattern().fullmatch(value):
        return value
    return repr(value)


def flag_requirement(requirement: str, flags: Mapping[str, str]) -> str:
    """A core requirement with the fields it mentions named as flags
    (``smaller than the limit (1000)`` -> ``smaller than --limit (1000)``)."""
    for field, flag in flags.items():
        requirement = requirement.replace(f"the {field}", flag)
    return requirement


def budget_error_message(exc: BudgetValueError, flags: Mapping[str, str]) -> str:
    """The core's error in the user's words: the flag instead of the field name."""
    flag = flags.get(exc.field)
    if flag is None:
        return str(exc)
    return (
        f"{flag} must be {flag_requirement(exc.requirement, flags)}, got {shown_value(exc.value)}"
    )


@overload
def handle_errors(func: _Main, /) -> _Main: ...


@overload
def handle_errors(*, flags: Mapping[str, str]) -> Callable[[_Main], _Main]: ...


def handle_errors(
    func: _Main | None = None, /, *, flags: Mapping[str, str] | None = None
) -> _Main | Callable[[_Main], _Main]:
    """Turn expected errors into one line on stderr and a non-zero exit, never a traceback.

    ``@handle_errors(flags=BUDGET_FLAGS)`` on a command whose options set a budget makes
    the core's :class:`BudgetValueError` name the flag (``--reserve``), not the field.
    """
    names: Mapping[str, str] = flags or {}

    def decorate(main: _Main) -> _Main:
        @functools.wraps(main)
        def wrapper(argv: Sequence[str], *args: Any, **kwargs: Any) -> int:
            try:
                return main(argv, *args, **kwargs)
            except SystemExit as exc:  # --help / --version from argparse
                return exc.code if isinstance(exc.code, int) else 0
            except UsageError as exc:
                sys.stderr.write(f"{exc}\n")
                return EXIT_USAGE
            except BudgetValueError as exc:
                return error(budget_error_message(exc, names), EXIT_USAGE)
            except CtxrelayError as exc:
                return error(str(exc))
            except KeyboardInterrupt:
                sys.stderr.write("ctxrelay: interrupted\n")
                return 130

        return wrapper  # type: ignore[return-value]

    return decorate if func is None else decorate(func)


def print_install(
    written: Path,
    verb: str,
    *,
    changed: bool,
    command: str = "",
    lines: Sequence[str] = (),
    notes: Sequence[str] = (),
) -> None:
    """What a host's install or uninstall changed in ``written``, in sentences: the
    change, the hook command, the host's own ``lines`` (its trust), then ``notes``."""
    out = sys.stdout
    if changed:
        out.write(f"ctxrelay {verb} {written}\n")
    else:
        out.write(f"nothing to do: {written} is already as it should be\n")
    if command:
        out.write(f"hooks run: {command}\n")
    for line in lines:
        out.write(f"{line}\n")
    for note in notes:
        out.write(f"note: {note}\n")


def print_doctor(
    checks: Sequence[Check], problems: Sequence[str], lines: Sequence[str] = ()
) -> None:
    """The end of a host's doctor report, in sentences: each hook's check, the host's own
    ``lines``, each problem, and whether everything works."""
    out = sys.stdout
    for check in checks:
        works = "works" if check.ok else "DOES NOT WORK"
        out.write(f"{check.kind}: {works}: {check.detail}.\n")
    for line in lines:
        out.write(f"{line}\n")
    for problem in problems:
        out.write(f"Problem: {problem}.\n")
    out.write(
        "Something is wrong: see the problems above.\n" if problems else "Everything works.\n"
    )


def print_json(value: Any) -> None:
    """Print one JSON document (``--json`` output prints nothing else on stdout)."""
    sys.stdout.write(json.dumps(value, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def console(stderr: bool = False) -> Console:
    """A rich console; imported here because hooks and ``--json`` must not pay for rich."""
    from rich.console import Console  # noqa: PLC0415 — rich: hooks and --json never draw

    return Console(stderr=stderr, highlight=False)
