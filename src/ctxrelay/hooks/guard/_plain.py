"""The Bash guard's fast path: a plain command needs no parser.

A command made only of plain words (ASCII letters, digits and ``-_./,+:=@%``) separated
by spaces or tabs has no quoting, expansion, glob, comment, redirect, pipe, list or
keyword in it: to bash it is one simple command whose words are its whitespace-split
parts. When the first of them is a printer (``cat big.txt``, ``head -n 5 app.log``: the
commands the guard denies most), what it prints follows from the words alone, by the
same rules the parser's walk (:mod:`ctxrelay.hooks.guard._shell`) applies to such a
command. The hook then loads neither tree-sitter (whose binary module imports ``re`` and
``enum``, as costly as the rest of the hook) nor the walk. Everything else is left to
the parser (``None``); ``tests/claude/guard/test_plain.py`` holds the two to the same
answers.
"""

from __future__ import annotations

import os

from ctxrelay.hooks.guard._commands import PRINTERS, plan
from ctxrelay.hooks.guard._model import FilePrint, Operand

__all__ = ["PATH_MAX", "plain_scan", "resolve"]

PATH_MAX = 4096
"""Longer words cannot name a file (the kernel refuses them), so they are no operand."""

_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,+:=@% \t")


def resolve(value: str, cwd: str | None) -> str | None:
    """An absolute path for a literal path word, or ``None`` when the directory is unknown."""
    if "\x00" in value:
        return None  # no path holds a NUL byte
    if value.startswith("~"):
        value = os.path.expanduser(value)
    if os.path.isabs(value):
        return os.path.normpath(value)
    if cwd is None:
        return None
    return os.path.normpath(os.path.join(cwd, value))


def plain_scan(command: str, cwd: str | None) -> tuple[FilePrint, ...] | None:
    """The file prints of a plain printer command; ``None`` for any other command."""
    if not command or not _PLAIN.issuperset(command):
        return None
    words = command.split()
    if not words or words[0] not in PRINTERS:
        return None
    program, args = words[0], words[1:]
    printed = plan(program, args)
    if printed is None or not printed.files:
        return ()  # nothing it prints is known, or it reads the terminal
    operands: list[Operand] = []
    for index in printed.files:
        word = args[index]
        if len(word) > PATH_MAX:
            continue  # the kernel takes no such path: no file is printed
        path = resolve(word, cwd)
        operands.append(Operand(word, literal=False) if path is None else Operand(path))
    if not operands:
        return ()
    return (FilePrint(command.strip(" \t"), program, tuple(operands), printed.ranges),)
