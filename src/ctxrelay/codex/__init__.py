"""The Codex CLI host: its hooks (Claude Code's hook protocol, answered by
``ctxrelay.claude``'s handlers and guard), trust through Codex's app-server, install,
doctor and config.

Imports run one way, ``ctxrelay.codex`` -> ``ctxrelay.claude``, never back
(``tests/codex/test_direction.py``). The hook Codex runs starts fast, so this package's
``__init__`` imports nothing.
"""

__all__: list[str] = []
