"""``ctxrelay analyze``: what sessions cost, and what a policy would have cost.

The command in three parts: its options (``_options``: the parser and the checks), the
run (``_run``: read, replay, apply, group, plot) and the printing (``_print``: ``--json``
or the tables)."""

from __future__ import annotations

from collections.abc import Sequence

from ctxrelay.cli._common import handle_errors
from ctxrelay.cli.analyze._options import parse
from ctxrelay.cli.analyze._print import print_result
from ctxrelay.cli.analyze._run import recommended_slider, run

__all__ = ["main", "recommended_slider"]


@handle_errors
def main(argv: Sequence[str]) -> int:
    """``ctxrelay analyze ARGS``."""
    options = parse(argv)
    print_result(run(options), options)
    return 0
