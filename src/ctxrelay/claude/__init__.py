"""The Claude Code host: hooks, guards, handoff files, statusline, install and driver.

``ctxrelay.claude.hook`` is the entry point Claude Code runs; it must start fast, so this
package's ``__init__`` imports nothing.
"""

__all__: list[str] = []
