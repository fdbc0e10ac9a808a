"""``ctxrelay demo``: the policy over a realistic coding-session trajectory.

Interim demo until the runtime lands: it replays the request sizes of a session that
reads files, edits, runs tests, receives its warning and handoff request, hands off, and
later meets a forced rollover.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxrelay.budget import Budget, simulate
from ctxrelay.cli._common import ArgumentParser, handle_errors, print_json
from ctxrelay.cli.policy import render_timeline, steps_json

__all__ = ["main"]


def _trajectory() -> list[int]:
    # Window 1: a base prompt, then reads and test runs that grow the context; the agent
    # checkpoints and calls new_context a few dispatches after the handoff request.
    sizes = [6_000, 14_000, 27_000, 41_000, 58_000, 73_000, 86_000, 99_000]
    sizes += [104_000, 112_000, 118_000, 123_000, 126_500]
    # Window 2 starts from the lead-in and the notes, then a long unbroken task that
    # ignores the handoff request and is rolled over at the usable limit.
    sizes += [9_000, 38_000, 71_000, 101_000, 124_000, 139_000, 158_000, 171_000]
    sizes += [11_000, 19_000]
    return sizes


@handle_errors
def main(argv: Sequence[str]) -> int:
    parser = ArgumentParser(prog="ctxrelay demo", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object per line")
    args = parser.parse_args(list(argv))
    budget = Budget(limit=200_000, output_reserve=32_000, threshold=60)
    steps = simulate(budget, _trajectory(), advisory_tokens=250)
    if args.json:
        for item in steps_json(steps):
            print_json({"event": "dispatch", **item})
        print_json({"event": "end", "session_id": None, "status": "done"})
        return 0
    render_timeline(budget, steps, title="ctxrelay demo: a coding session under the policy")
    return 0
