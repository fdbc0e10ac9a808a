"""The Codex CLI host: its hooks (an adapter of the core ``ctxrelay.hooks``), and, in
``setup/`` at install time only, install with trust through Codex's app-server, and
doctor.

It imports the core, never another host (``tests/test_hosts_apart.py``). The hook Codex
runs starts fast, so this package's ``__init__`` imports nothing.
"""

__all__: list[str] = []
