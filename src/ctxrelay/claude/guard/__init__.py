"""Guards against printing files into Claude Code's context (PreToolUse).

- :mod:`ctxrelay.claude.guard.bash`: deny a Bash command whose file prints Claude Code
  would hand the model whole and big, and name a Read of one page of each file.
- :mod:`ctxrelay.claude.guard.read`: deny a Read over its share of the room left below
  the usable limit, and a Read of lines already read (the re-read rule).

The hook imports each guard only for its tool, so this ``__init__`` imports nothing.
The rules, with examples, are in ``docs/guard.md``.
"""

__all__: list[str] = []
