"""The ``ctxrelay HOST mcp`` commands' one shape: a help that explains, no options, then
the ``session_history`` MCP server over stdio until the client closes the pipe."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from ctxrelay.cli._common import ArgumentParser

__all__ = ["mcp_command"]


def mcp_command(prog: str, description: str, argv: Sequence[str], serve: Callable[[], None]) -> int:
    """Parse ``argv`` (``--help`` only) for ``prog``, then ``serve``."""
    ArgumentParser(
        prog=prog, description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    ).parse_args(list(argv))
    serve()
    return 0
