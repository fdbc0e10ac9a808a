"""Which parts of a shell command print which file, and which lines of it: the one
reading every host's shell guard asks (``docs/guard.md``).

A command prints a file when one of the printers of :mod:`._commands` (``cat``,
``head``, ``tail``, ``sed``, ``nl``, ``jq .`` …) reads a file and its stdout reaches the
tool's result, in any part of a compound command (``| tee`` passes it on, ``bash -c``
runs a command of its own). Output into a pipe, a redirect, or a command or process
substitution does not reach it, and neither does a heredoc writer (``cat > f
<<'EOF'``). A command that does not parse reads as ``None``: the guards never block
what they cannot understand. What a host does with the answer (its bounds, its advice)
is the host's.
"""

from __future__ import annotations

import re

from ctxrelay.hooks.guard._model import FilePrint
from ctxrelay.hooks.guard._plain import plain_scan
from ctxrelay.hooks.guard._shell import scan

__all__ = ["PRECHECK_WORDS", "classify", "might_print_file"]

PRECHECK_WORDS = (
    "cat",
    "head",
    "tail",
    "sed",
    "nl",
    "tac",
    "less",
    "more",
    "jq",
    "awk",
    "python",
    "python3",
)
"""Words one of which a command must contain to be parsed at all; a test keeps them
equal to the programs the guard understands (``_commands.PRINTERS``)."""

# A program name ends at a non-name character: "/bin/cat" and "\cat" match, "cat-file"
# and "header" do not.
_PRECHECK = re.compile(r"(?<![\w.-])(?:" + "|".join(PRECHECK_WORDS) + r")(?![\w.-])")


def might_print_file(command: str) -> bool:
    """A cheap test that is true for every command the guard could deny."""
    if not any(word in command for word in PRECHECK_WORDS):
        return False
    return _PRECHECK.search(command) is not None


def classify(command: str, cwd: str | None = None) -> tuple[FilePrint, ...] | None:
    """The parts of ``command`` that print a file; ``None`` when it cannot be parsed.

    ``cwd`` (absolute) is the directory the command runs in; relative paths in the
    result are made absolute against it (following any ``cd`` in the command).
    """
    if not any(word in command for word in PRECHECK_WORDS):
        return ()
    found = plain_scan(command, cwd)  # ``cat big.txt``: no parser needed
    if found is not None:
        return found
    if not might_print_file(command):
        return ()
    return scan(command, cwd)
