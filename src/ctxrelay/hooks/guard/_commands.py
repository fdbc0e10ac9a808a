"""What ``cat``, ``head``, ``tail`` and ``sed -n`` print, from their arguments alone.

Pure: arguments in (``None`` for a word whose value is only known when the shell runs,
like ``$N``), a :class:`Plan` out. Options follow GNU coreutils and GNU sed, including
option permutation (``cat f -n``), ``--`` and the obsolete ``head -5`` / ``tail -5``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

from ctxrelay.hooks.guard._model import WHOLE_FILE, LineRange

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ctxrelay.hooks.guard._model import Unit

    Args = Sequence[str | None]

__all__ = ["PRINTERS", "UNKNOWN_OPTION", "Plan", "plan"]

UNKNOWN_OPTION = "-\x00"
"""Stands for an option word whose value the shell computes (``-$n``): no real argument
can hold a NUL byte."""


class Plan(NamedTuple):
    """The files a command prints (indices into its arguments; none means stdin) and
    the ranges it prints of each (``None``: known only at run time)."""

    files: tuple[int, ...]
    ranges: tuple[LineRange, ...] | None


_SUFFIXES = {
    "": 1,
    "b": 512,
    "kB": 1000,
    "K": 1024,
    "KiB": 1024,
    "MB": 1000**2,
    "M": 1024**2,
    "MiB": 1024**2,
    "GB": 1000**3,
    "G": 1024**3,
    "GiB": 1024**3,
}
# Patterns are compiled on first use (``re`` caches them), and ``re`` itself is imported
# by the functions that need it: the hook imports this module for every command that
# mentions cat/head/tail/sed, and ``cat f`` needs none of them.
_COUNT = r"([+-]?)(\d+)([A-Za-z]*)\Z"
_OBSOLETE = r"-(\d+)([cl]?)(f?)\Z"  # head -5, tail -20, tail -5c, tail -20f


def _obsolete(arg: str) -> re.Match[str] | None:
    return re.match(_OBSOLETE, arg)


def _count(text: str | None) -> tuple[str, int] | None:
    """``"5"`` → ``("", 5)``, ``"-5"`` → ``("-", 5)``, ``"+2K"`` → ``("+", 2048)``."""
    if text is None:
        return None
    m = re.match(_COUNT, text)
    if m is None or m.group(3) not in _SUFFIXES:
        return None
    return m.group(1), int(m.group(2)) * _SUFFIXES[m.group(3)]


def _is_stdin(arg: str | None) -> bool:
    # "-" is stdin; device and kernel pseudo-files are not files a Read could page.
    return arg is not None and (arg == "-" or arg.startswith(("/dev/", "/proc/", "/sys/")))


def _operands(args: Args, indices: list[int]) -> tuple[int, ...]:
    return tuple(i for i in indices if not _is_stdin(args[i]))


def _cat(args: Args) -> Plan | None:
    files: list[int] = []
    options = True
    for i, arg in enumerate(args):
        if options and arg is not None and arg.startswith("-") and arg != "-":
            if arg == "--":
                options = False
            elif arg in ("--help", "--version"):
                return None
            continue  # cat's options take no argument
        files.append(i)
    return Plan(_operands(args, files), (WHOLE_FILE,))


def _head_range(unit: str, count: tuple[str, int] | None) -> tuple[LineRange, ...] | None:
    if count is None:
        return None
    sign, n = count
    kind: Unit = "byte" if unit == "c" else "line"
    if sign == "-":  # all but the last n
        return (LineRange(None, -(n + 1), kind),) if n else (LineRange(unit=kind),)
    return (LineRange(None, n, kind),) if n else ()


def _tail_range(unit: str, count: tuple[str, int] | None) -> tuple[LineRange, ...] | None:
    if count is None:
        return None
    sign, n = count
    kind: Unit = "byte" if unit == "c" else "line"
    if sign == "+":  # from the n-th on
        return (LineRange(max(n, 1), None, kind),)
    return (LineRange(-n, None, kind),) if n else ()


def _head_tail(args: Args, *, tail: bool) -> Plan | None:
    make = _tail_range if tail else _head_range
    # Short options that take a value, and long ones (with their short letter, or "" for
    # a value that does not matter here).
    valued = "ncs" if tail else "nc"
    long_valued = {"lines": "n", "bytes": "c"}
    if tail:
        long_valued |= {"sleep-interval": "", "pid": "", "max-unchanged-stats": ""}
    ranged: tuple[LineRange, ...] | None = make("n", ("", 10))  # 10 lines by default
    files: list[int] = []
    options = True
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not (options and arg is not None and arg.startswith("-") and arg != "-"):
            files.append(i - 1)
            continue
        if arg == "--":
            options = False
            continue
        if arg == UNKNOWN_OPTION:
            ranged = None  # "-$n" may well be the count
            continue
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            if name in ("help", "version"):
                return None
            letter = next((v for k, v in long_valued.items() if k.startswith(name)), None)
            if letter is None or not name:
                continue  # a flag (--follow, --quiet, ...)
            given: str | None = value
            if not eq:
                given = args[i] if i < len(args) else ""
                i += 1
            if letter:
                ranged = make(letter, _count(given))
            continue
        old = _obsolete(arg) if arg[1:2].isdigit() else None
        if old is not None:
            unit = "c" if old.group(2) == "c" else "n"
            ranged = make(unit, ("", int(old.group(1))))
            continue
        body = arg[1:]
        for j, letter in enumerate(body):
            if letter not in valued:
                continue  # a flag: -q, -v, -z, -f, -F
            attached: str | None = body[j + 1 :]
            if not attached:
                attached = args[i] if i < len(args) else ""
                i += 1
            if letter != "s":
                ranged = make(letter, _count(attached))
            break
    if ranged == ():
        return None  # -n 0: prints nothing
    return Plan(_operands(args, files), ranged)


# sed: a script of line-addressed prints, "5p", "10,20p", "$p", "3,$p", "4,+2{p}",
# separated by ";" or newlines, optionally with a quit ("20q"). Anything else (a regex
# address, s///p, "!") is an edit or a search, not a file print.
_SED_PRINT = r"(\d+|\$)?(?:,(\d+|\$|\+\d+))?\s*(?:p|\{\s*p\s*;?\s*\})\Z"
_SED_QUIT = r"(\d+|\$)?\s*([qQ])(?:\s+\d+)?\Z"


def _cap(r: LineRange, stop: int) -> LineRange | None:
    """``r`` as printed by a script that quits after line ``stop``."""
    if r.first is None or r.first < 0:
        return r  # counted from the end: left as is (rare with a quit)
    if r.first > stop:
        return None
    if r.last is None or r.last < 0 or r.last > stop:
        return LineRange(r.first, stop)
    return r


def _sed_ranges(script: str) -> tuple[LineRange, ...] | None:
    ranges: list[LineRange] = []
    stop: int | None = None  # the last line printed before a quit
    for part in re.split(r"[;\n]", script):
        item = part.strip()
        if not item:
            continue
        quit_ = re.match(_SED_QUIT, item)
        if quit_ is not None:
            at = quit_.group(1)
            if at != "$":
                line = int(at) if at else 1
                last = line if quit_.group(2) == "q" else line - 1
                stop = last if stop is None else min(stop, last)
            continue
        m = re.match(_SED_PRINT, item)
        if m is None:
            return None
        a, b = m.group(1), m.group(2)
        if a is None:
            ranges.append(LineRange(1, None))
        elif a == "$":
            ranges.append(LineRange(-1, -1))
        elif int(a) == 0:
            return None  # "0,/re/" and invalid "0p"
        elif b is None:
            ranges.append(LineRange(int(a), int(a)))
        elif b == "$":
            ranges.append(LineRange(int(a), None))
        elif b.startswith("+"):
            ranges.append(LineRange(int(a), int(a) + int(b[1:])))
        else:  # a range whose end is before its start prints its first line only
            ranges.append(LineRange(int(a), max(int(a), int(b))))
    if stop is not None:
        ranges = [c for c in (_cap(r, stop) for r in ranges) if c is not None]
    return tuple(ranges)


def _sed(args: Args) -> Plan | None:
    quiet = False
    scripts: list[str] = []
    operands: list[int] = []
    options = True
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not (options and arg is not None and arg.startswith("-") and arg != "-"):
            operands.append(i - 1)
            continue
        if arg == "--":
            options = False
            continue
        if arg == UNKNOWN_OPTION:
            return None  # it may be -i or -f: no judgement
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            if name in ("quiet", "silent"):
                quiet = True
            elif name == "expression":
                if not eq:
                    value = (args[i] if i < len(args) else None) or ""
                    i += 1
                if value is None:
                    return None
                scripts.append(value)
            elif name in ("file", "in-place", "null-data", "help", "version"):
                return None  # a script we cannot see, an edit, or no file print
            elif name == "line-length" and not eq:
                i += 1
            continue
        body = arg[1:]
        for j, letter in enumerate(body):
            if letter == "n":
                quiet = True
            elif letter in "ifz":
                return None  # -i edits in place; -f reads the script; -z is not lines
            elif letter in "el":
                value = body[j + 1 :]
                if not value:
                    value = (args[i] if i < len(args) else None) or ""
                    i += 1
                if letter == "e":
                    scripts.append(value)
                break
    if not scripts:
        if not operands or args[operands[0]] is None:
            return None
        scripts.append(args[operands[0]] or "")
        operands = operands[1:]
    script = "\n".join(scripts)
    if script.startswith("#n\n") or script == "#n":
        quiet, script = True, script[3:]
    if not quiet:
        return None
    ranges = _sed_ranges(script)
    if not ranges:
        return None
    return Plan(_operands(args, operands), ranges)


_PLANNERS: dict[str, Callable[[Args], Plan | None]] = {
    "cat": _cat,
    "head": lambda args: _head_tail(args, tail=False),
    "tail": lambda args: _head_tail(args, tail=True),
    "sed": _sed,
}

PRINTERS = frozenset(_PLANNERS)
"""The programs the guard knows how to read; each has a planner here."""


def plan(program: str, args: Args) -> Plan | None:
    """What ``program args...`` prints, or ``None`` when it prints no file content."""
    planner = _PLANNERS.get(program)
    return None if planner is None else planner(args)
