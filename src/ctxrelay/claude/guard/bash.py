"""The Bash guard: deny a command that prints a file into the context.

A command prints a file when ``cat``, ``head``, ``tail`` or ``sed -n`` with a line
range reads a file and its stdout reaches the Bash tool's result, in any part of a
compound command. Output into a pipe, a redirect, or a command or process substitution
does not reach it, and neither does a heredoc writer (``cat > f <<'EOF'``). The deny
reason names the Read call that shows the same file and range. A command that does not
parse is allowed: the guard never blocks what it cannot understand. Rules and examples:
``docs/guard.md``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ctxrelay.claude.guard._model import FilePrint
from ctxrelay.claude.guard._plain import plain_scan
from ctxrelay.claude.guard._reads import reason

__all__ = ["PRECHECK_WORDS", "classify", "deny_reason", "might_print_file"]

PRECHECK_WORDS = ("cat", "head", "tail", "sed")
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
    from ctxrelay.claude.guard._shell import scan  # the parser: only for shell syntax

    return scan(command, cwd)


def deny_reason(
    command: str, cwd: str | None, payload: Mapping[str, object] | None = None
) -> str | None:
    """The reason to deny ``command``, with the Read calls to use; ``None`` to allow it.
    With the hook's ``payload``, a Read call of a whole file the agent already read in
    full (and which would be denied as a repeat) says so."""
    prints = classify(command, cwd)
    if not prints:
        return None
    return reason(prints, payload)
