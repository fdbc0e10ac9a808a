"""``ctxrelay demo``: a built-in coding session through the real runtime and a real store.

No API key, no arguments: a scripted model adds a --json flag to a small to-do project.
It crosses the warning, receives the handoff request, writes and confirms its notes,
calls new_context, continues in window 2 from the notes and session_history, later
meets a forced rollover at the usable limit, and finishes in window 3. The live
timeline shows each dispatch's tokens against the warning point (│), the handoff target
(┃) and the usable limit (the end of the bar), and each decision.

Examples:
  ctxrelay demo
  ctxrelay demo --json                 # one JSON object per event
  ctxrelay demo --db demo.db           # keep the session in a file of your choice
  ctxrelay sessions show ID --db demo.db
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ctxrelay.budget import Budget
from ctxrelay.cli._common import ArgumentParser, console, handle_errors
from ctxrelay.cli._demo_session import DEMO_TASK, demo_steps, demo_workspace
from ctxrelay.cli.run import add_session_arguments, exit_code, run_session
from ctxrelay.runtime import Runtime, SessionConfig
from ctxrelay.runtime.providers.scripted import ScriptedProvider, load_steps
from ctxrelay.runtime.tools import atomic_write, builtin_tools

__all__ = ["DEMO_BUDGET", "main"]

DEMO_BUDGET = Budget(limit=200_000, output_reserve=32_000, threshold=60)
"""A Claude-sized window: warning at 100,000, handoff target 120,000, usable 168,000."""


def _workspace(where: Path | None) -> Path:
    root = Path(tempfile.mkdtemp(prefix="ctxrelay-demo-")) if where is None else where.resolve()
    if where is not None and where.exists() and any(where.iterdir()):
        raise_config(f"the demo workspace {str(where)!r} must be empty or absent")
    for relative, text in demo_workspace().items():
        atomic_write(root / relative, text.encode("utf-8"))
    return root


def raise_config(message: str) -> None:
    from ctxrelay.errors import ConfigError

    raise ConfigError(message)


@handle_errors
def main(argv: Sequence[str]) -> int:
    parser = ArgumentParser(
        prog="ctxrelay demo",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_session_arguments(parser)
    parser.add_argument(
        "--workspace", type=Path, help="where to create the demo project (default: a temp dir)"
    )
    from ctxrelay.cli._demo_frameworks import FRAMEWORKS, run_framework

    parser.add_argument(
        "--framework",
        choices=FRAMEWORKS,
        help="run the session through this framework's own agent loop (ctxrelay's "
        "integration for it), over HTTP to a local model server",
    )
    args = parser.parse_args(list(argv))
    from ctxrelay.cli._timeline import JsonLines, Timeline
    from ctxrelay.store import open_store

    store = open_store(args.db)
    try:
        where = store.describe() if hasattr(store, "describe") else str(args.db)
        workspace = _workspace(args.workspace)
        provider = ScriptedProvider(load_steps(demo_steps()), name="scripted:demo")
        sink = JsonLines() if args.json else Timeline()
        if args.framework is not None:
            result = run_framework(
                args.framework,
                store=store,
                workspace=workspace,
                budget=DEMO_BUDGET,
                task=DEMO_TASK,
                steps=demo_steps(),
                on_event=sink,
            )
        else:
            runtime = Runtime(store, provider, tools=builtin_tools(), on_event=sink)
            config = SessionConfig(budget=DEMO_BUDGET, workspace=workspace)
            session = runtime.start(DEMO_TASK, config)
            result = asyncio.run(run_session(session, None))
        sink.close()
    finally:
        store.close()
    if not args.json:
        db = f" --db {args.db}" if args.db else ""
        out = console()
        out.print(
            f"\nThe session is stored in {where}; the project it edited is in {workspace}.\n"
            f"Inspect it with:\n  ctxrelay sessions show {result.session_id}{db}",
            markup=False,  # paths may hold "[...]"
        )
    return exit_code(result)
