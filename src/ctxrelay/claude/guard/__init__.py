"""Guards against printing files into Claude Code's context (PreToolUse).

- :mod:`ctxrelay.claude.guard.bash`: deny a Bash command that prints a file (``cat``,
  ``head``, ``tail``, ``sed -n`` with a print range) and name the equivalent Read calls.
- :mod:`ctxrelay.claude.guard.read`: deny an unbounded Read of a file over
  ``READ_MAX_BYTES``.

The hook imports each guard only for its tool, so this ``__init__`` imports nothing.
The rules, with examples, are in ``docs/guard.md``.
"""

__all__: list[str] = []
