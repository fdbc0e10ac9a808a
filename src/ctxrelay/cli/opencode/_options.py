"""What the ``ctxrelay opencode`` subcommands share: the scope options (the core's
:func:`ctxrelay.cli._common.scope_parser` with this host's folders)."""

from __future__ import annotations

from ctxrelay.cli._common import ArgumentParser, scope_of
from ctxrelay.cli._common import scope_parser as _scope_parser

__all__ = ["scope_of", "scope_parser"]


def scope_parser(name: str, description: str) -> ArgumentParser:
    """The options install, uninstall and doctor share: which folder, which project."""
    return _scope_parser(
        f"ctxrelay opencode {name}",
        description,
        project_file=".opencode/plugin/ctxrelay.ts",
        user_file="~/.config/opencode/plugin/ctxrelay.ts",
    )
