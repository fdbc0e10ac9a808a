"""The OpenCode host: its plugin (``plugin/ctxrelay.ts``, which OpenCode loads and which
hands each event it forwards to ctxrelay's core as one command), the events' handlers
(an adapter of the core ``ctxrelay.hooks``), and, in ``setup/`` at install time only,
install, uninstall and doctor.

It imports the core, never another host (``tests/test_hosts_apart.py``). The hook the
plugin runs starts fast, so this package's ``__init__`` imports nothing.
"""

__all__: list[str] = []
