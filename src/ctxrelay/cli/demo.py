"""ctxrelay demo: a built-in coding session through the real runtime and a real store.

No API key, no arguments: a scripted model adds a --json flag to a small to-do project.
It crosses the warning, receives the handoff request, writes and confirms its notes,
calls new_context, continues in window 2 from the notes and session_history, later
meets a forced rollover at the usable limit, and finishes in window 3. The live
timeline shows each dispatch's tokens against the warning point (│), the handoff target
(┃) and the usable limit (the end of the bar), and each decision.

The session is priced as Claude Sonnet 4.6 (list prices, prompt caching) and at the end
set against the same work without handoff: one window growing to the usable limit,
priced the same way by the cost analyzer. --json's last line carries both costs
(cost_usd, cost_without_handoff_usd) and the peak context of each.

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
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ctxrelay.analyze import Savings, handoff_savings
from ctxrelay.budget import Budget
from ctxrelay.budget.bounds import DEFAULT_CONTEXT_WINDOW, DEFAULT_RESERVE_CAP, DEFAULT_THRESHOLD
from ctxrelay.cli._common import ArgumentParser, handle_errors, print_json
from ctxrelay.cli._demo_frameworks import FRAMEWORKS, run_framework
from ctxrelay.cli._demo_session import (
    DEMO_PRICED_AS,
    DEMO_TASK,
    PromptCaching,
    demo_steps,
    demo_workspace,
)
from ctxrelay.cli._screen import print_line
from ctxrelay.cli._suggest import suggest
from ctxrelay.cli._timeline import JsonLines, Timeline
from ctxrelay.cli.run import add_session_arguments, exit_code, run_session
from ctxrelay.errors import ConfigError
from ctxrelay.pricing import DEFAULT_PRICES, Prices
from ctxrelay.runtime import Runtime, SessionConfig
from ctxrelay.runtime.events import EndEvent, Event
from ctxrelay.runtime.providers.scripted import ScriptedProvider, load_steps
from ctxrelay.runtime.tools import atomic_write, builtin_tools
from ctxrelay.store import open_store

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["DEMO_BUDGET", "DemoOutput", "demo_prices", "main"]

DEMO_BUDGET = Budget(
    limit=DEFAULT_CONTEXT_WINDOW, output_reserve=DEFAULT_RESERVE_CAP, threshold=DEFAULT_THRESHOLD
)
"""A Claude-sized window: warning at 100,000, handoff target 120,000, usable 168,000."""


def _workspace(where: Path | None) -> Path:
    root = Path(tempfile.mkdtemp(prefix="ctxrelay-demo-")) if where is None else where.resolve()
    if where is not None and where.exists() and any(where.iterdir()):
        raise ConfigError(f"the demo workspace {str(where)!r} must be empty or absent")
    for relative, text in demo_workspace().items():
        atomic_write(root / relative, text.encode("utf-8"))
    return root


def demo_prices() -> Prices:
    """The prices the demo's session is charged at (:data:`DEMO_PRICED_AS`'s)."""
    prices = DEFAULT_PRICES.lookup(DEMO_PRICED_AS)
    assert prices is not None, f"the pricing table lost {DEMO_PRICED_AS}"
    return prices


class DemoOutput:
    """The demo's output, from the runtime's events: the live timeline (``--json``: one
    JSON object per event), then what the handoff saved.

    ``savings(session_id)`` prices the finished session against the same work without
    handoff; its figures end the timeline and join the ``end`` event's JSON line. Any
    session the runtime runs can be shown this way (``ctxrelay demo --framework …``).
    """

    def __init__(
        self,
        *,
        json: bool,
        savings: Callable[[str], Savings] | None = None,
        priced_as: str = DEMO_PRICED_AS,
        console: Console | None = None,
    ) -> None:
        self.json = json
        self._savings = savings
        self.priced_as = priced_as
        self.timeline = None if json else Timeline(console)
        self._sink: Callable[[Event], None] = (
            JsonLines() if self.timeline is None else self.timeline
        )
        self.saved: Savings | None = None

    def text(self, delta: str) -> None:
        """A piece of a reply as it streams (``Runtime(on_text=…)``)."""
        if self.timeline is not None:
            self.timeline.text(delta)

    def __call__(self, event: Event) -> None:
        if not isinstance(event, EndEvent) or self._savings is None:
            self._sink(event)
            return
        self.saved = saved = self._savings(event.session_id)
        if self.timeline is None:
            print_json({**event.to_json(), "priced_as": self.priced_as, **saved.as_json()})
            return
        # The session's cost as the savings priced it: the same figure for the runtime's
        # own session, and the only one for a framework's, whose events carry no price.
        self.timeline(replace(event, cost_usd=saved.cost_usd))
        self._print_savings(saved)

    def _print_savings(self, saved: Savings) -> None:
        assert self.timeline is not None
        out = self.timeline.out
        family = DEFAULT_PRICES.lookup(self.priced_as)
        name = family.family if family is not None and family.family else self.priced_as
        share = (
            saved.saved_usd / saved.cost_without_handoff_usd
            if saved.cost_without_handoff_usd
            else 0
        )
        lines = [
            "",
            f"[bold]What the handoff saved[/bold], priced as {name} ({self.priced_as}):",
            f"  with handoff     ${saved.cost_usd:.4f}  {saved.windows} windows, "
            f"peak context {saved.peak_context_tokens:,} tokens",
            f"  without handoff  ${saved.cost_without_handoff_usd:.4f}  one window, "
            f"peak context {saved.peak_context_without_handoff_tokens:,} tokens",
        ]
        if saved.at_limit:
            lines.append(
                f"                   [dim]needs {saved.needed_without_handoff_tokens:,}: "
                f"{saved.at_limit} requests capped at the limit, a lower bound[/dim]"
            )
        verb = "saved" if saved.saved_usd >= 0 else "cost"
        lines.append(f"  handoff {verb}    [bold]${abs(saved.saved_usd):.4f}[/bold] ({share:.0%})")
        for line in lines:
            print_line(out, line)

    def close(self) -> None:
        close = getattr(self._sink, "close", None)
        if close is not None:
            close()


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
    parser.add_argument(
        "--framework",
        choices=FRAMEWORKS,
        help="run the session through this framework's own agent loop (ctxrelay's "
        "integration for it), over HTTP to a local model server",
    )
    args = parser.parse_args(list(argv))
    store = open_store(args.db)
    try:
        where = store.describe() if hasattr(store, "describe") else str(args.db)
        workspace = _workspace(args.workspace)
        provider = PromptCaching(ScriptedProvider(load_steps(demo_steps()), name="scripted:demo"))
        prices = demo_prices()
        sink = DemoOutput(
            json=args.json,
            savings=lambda session_id: handoff_savings(
                store, session_id, DEMO_BUDGET, DEMO_PRICED_AS
            ),
        )
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
            config = SessionConfig(budget=DEMO_BUDGET, workspace=workspace, prices=prices)
            session = runtime.start(DEMO_TASK, config)
            result = asyncio.run(run_session(session, None))
        sink.close()
    finally:
        store.close()
    if sink.timeline is not None:
        from rich.text import Text  # noqa: PLC0415 — rich: --json never draws

        out = sink.timeline.out
        db = ["--db", str(args.db)] if args.db else []
        out.print()
        # Paths are text, not markup, and never cut: a shortened path or command is of no
        # use. They stay one line each (soft wrap), so a copied command runs as shown.
        for line in (
            "The session is stored in",
            f"  {where}",
            "The project it edited is in",
            f"  {workspace}",
            "Inspect it with:",
            f"  {suggest('sessions', 'show', result.session_id, *db)}",
        ):
            out.print(Text(line), soft_wrap=True)
    return exit_code(result)
