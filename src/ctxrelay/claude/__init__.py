"""The Claude Code host: hooks, guards, handoff files, statusline and driver; in
``setup/``, install time only, install and doctor.

``ctxrelay.claude.hook`` is the entry point Claude Code runs; it must start fast, so this
package's ``__init__`` imports nothing.
"""

__all__: list[str] = []
