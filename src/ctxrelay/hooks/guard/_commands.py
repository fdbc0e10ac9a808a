"""What ``cat``, ``head``, ``tail``, ``sed`` and the other common file printers (``nl``,
``tac``, ``less``, ``more``, ``jq .``, ``awk '{print}'``, ``python3 -c
'print(open(f).read())'``) print, from their arguments alone.

Pure: arguments in (``None`` for a word whose value is only known when the shell runs,
like ``$N``), a :class:`Plan` out. Options follow GNU coreutils and GNU sed, including
option permutation (``cat f -n``), ``--`` and the obsolete ``head -5`` / ``tail -5``.
"""

from __future__ import annotations

import ast
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
    the ranges it prints of each (``None``: known only at run time). ``paths`` are files
    named inside an argument rather than as one (``python3 -c 'print(open("f").read())'``)."""

    files: tuple[int, ...]
    ranges: tuple[LineRange, ...] | None
    paths: tuple[str, ...] = ()


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


def _cat(args: Args, valued: str = "") -> Plan | None:
    """A program that prints each file operand whole; ``valued`` are its short options
    that take a separate value (``nl -w 3``, ``tac -s X``)."""
    files: list[int] = []
    options = True
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if options and arg is not None and arg.startswith("-") and arg != "-":
            if arg == "--":
                options = False
            elif arg in ("--help", "--version"):
                return None
            elif not arg.startswith("--") and arg[-1] in valued:
                skip = True  # "-w 3": the value is the next word
            continue
        files.append(i)
    return Plan(_operands(args, files), (WHOLE_FILE,))


# jq filters and awk programs that print their whole input (spaces removed).
_JQ_WHOLE = frozenset({".", ".[]"})
_AWK_WHOLE = frozenset({"1", "{print}", "{print$0}", "{print;}", "{print$0;}", "//"})


def _jq(args: Args) -> Plan | None:
    """``jq . f``: the whole file, pretty-printed. Any other filter picks a part."""
    words: list[int] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg is None:
            return None
        if arg.startswith("-") and arg != "-":
            if arg in ("--arg", "--argjson", "--slurpfile", "--rawfile"):
                i += 2
            elif arg in ("--indent", "-L"):
                i += 1
            elif arg in ("-f", "--from-file", "--args", "--jsonargs", "-n", "--null-input"):
                return None  # a filter we cannot see, or no file read
            continue
        words.append(i - 1)
    if not words or (args[words[0]] or "").replace(" ", "") not in _JQ_WHOLE:
        return None
    return Plan(_operands(args, words[1:]), (WHOLE_FILE,))


def _awk(args: Args) -> Plan | None:
    """``awk '{print}' f``: a program that prints every line. Any other one is not judged."""
    words: list[int] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg is None:
            return None
        if arg.startswith("-") and arg != "-" and not words:
            if arg in ("-F", "-v"):
                i += 1
            elif arg.startswith("-f"):
                return None  # the program is in a file
            continue
        words.append(i - 1)
    if not words or re.sub(r"\s", "", args[words[0]] or "") not in _AWK_WHOLE:
        return None
    files = [k for k in words[1:] if "=" not in (args[k] or "")]  # "x=1" is an assignment
    return Plan(_operands(args, files), (WHOLE_FILE,))


def _opened(node: ast.expr) -> str | None:
    """The literal path of ``open("f").read()`` or ``Path("f").read_text()``."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    inner = node.func.value
    if node.func.attr not in ("read", "read_text", "read_bytes"):
        return None
    if not (isinstance(inner, ast.Call) and inner.args):
        return None
    name = (
        inner.func.attr if isinstance(inner.func, ast.Attribute) else getattr(inner.func, "id", "")
    )
    first = inner.args[0]
    if (
        name in ("open", "Path")
        and isinstance(first, ast.Constant)
        and isinstance(first.value, str)
    ):
        return first.value
    return None


def _python(args: Args) -> Plan | None:
    """``python3 -c 'print(open("f").read())'`` (or ``sys.stdout.write(...)``, or
    ``Path("f").read_text()``): Python's own parser reads the code."""
    if len(args) < 2 or args[0] != "-c" or args[1] is None:
        return None
    try:
        tree = ast.parse(args[1])
    except (SyntaxError, ValueError):
        return None
    paths: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        func = node.func
        named = getattr(func, "id", None) == "print" or getattr(func, "attr", None) == "write"
        path = _opened(node.args[0]) if named else None
        if path is not None:
            paths.append(path)
    if not paths:
        return None
    return Plan((), (WHOLE_FILE,), tuple(paths))


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
        # Without -n sed prints every line it does not delete: an empty script prints
        # the file whole, "Nq" its first N lines. Other edits are not judged.
        if not script.strip():
            return Plan(_operands(args, operands), (WHOLE_FILE,))
        quit_ = re.match(r"\s*(\d+)q\s*\Z", script)
        if quit_ is None or not int(quit_.group(1)):
            return None
        return Plan(_operands(args, operands), (LineRange(None, int(quit_.group(1))),))
    ranges = _sed_ranges(script)
    if not ranges:
        return None
    return Plan(_operands(args, operands), ranges)


_PLANNERS: dict[str, Callable[[Args], Plan | None]] = {
    "cat": _cat,
    "head": lambda args: _head_tail(args, tail=False),
    "tail": lambda args: _head_tail(args, tail=True),
    "sed": _sed,
    "nl": lambda args: _cat(args, "bdfhilnsvw"),
    "tac": lambda args: _cat(args, "s"),
    "less": _cat,
    "more": _cat,
    "jq": _jq,
    "awk": _awk,
    "python": _python,
    "python3": _python,
}

PRINTERS = frozenset(_PLANNERS)
"""The programs the guard knows how to read; each has a planner here."""


def plan(program: str, args: Args) -> Plan | None:
    """What ``program args...`` prints, or ``None`` when it prints no file content."""
    planner = _PLANNERS.get(program)
    return None if planner is None else planner(args)
