"""The Gemini CLI host: its hooks (an adapter of the core ``ctxrelay.hooks``), and, in
``setup/`` at install time only, install into ``.gemini/settings.json``, uninstall and
doctor.

It imports the core, never another host (``tests/test_hosts_apart.py``). The hook the
Gemini CLI runs starts fast, so this package's ``__init__`` imports nothing.
"""

__all__: list[str] = []
