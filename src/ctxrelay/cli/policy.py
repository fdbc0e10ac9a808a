"""``ctxrelay policy plan|simulate``: the policy core on the command line (DESIGN §7)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from typing import Any

from ctxrelay.budget import (
    DEFAULT_WARNING_LEAD,
    Action,
    Budget,
    Capability,
    Stage,
    Step,
    advisory_text,
    simulate,
)
from ctxrelay.cli._common import ArgumentParser, console, handle_errors, print_json

__all__ = ["add_budget_arguments", "budget_from_args", "main", "plan_json", "steps_json"]

_DESCRIPTION = """\
Plan a context budget or replay dispatches through the policy.

  plan      the derived points: usable limit, handoff target, warning point
  simulate  the decision for each request size in order, claims carried per window

Example:
  ctxrelay policy plan --limit 200000 --reserve 32000 --threshold 60
  ctxrelay policy simulate --limit 200000 --reserve 32000 --threshold 60 \\
      --tokens 90000,100000,110000,121000,125000,168001,50000
"""


def _whole(name: str) -> Any:
    def parse(text: str) -> int:
        try:
            return int(text.replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{name} must be a whole number of tokens, got {text!r}"
            ) from None

    return parse


def _number(name: str) -> Any:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{name} must be a finite number, got {text!r}")
        return value

    return parse


def _token_list(text: str) -> list[int]:
    values: list[int] = []
    for part in text.split(","):
        item = part.strip().replace("_", "")
        if not item.isdigit():
            raise argparse.ArgumentTypeError(
                "--tokens must be a comma-separated list of whole numbers of tokens, "
                f"zero or more; {part.strip()!r} is not one"
            )
        values.append(int(item))
    return values


def add_budget_arguments(parser: argparse.ArgumentParser) -> None:
    """The budget options every command that evaluates the policy accepts."""
    parser.add_argument(
        "--limit", type=_whole("--limit"), required=True, help="model context window (tokens)"
    )
    parser.add_argument(
        "--reserve",
        type=_whole("--reserve"),
        required=True,
        help="output reserve (tokens); usable limit = limit - reserve",
    )
    parser.add_argument(
        "--threshold",
        type=_number("--threshold"),
        required=True,
        help="the slider, percent of the limit (decimals allowed; 100 = Off; floor 10)",
    )
    parser.add_argument(
        "--warning-lead",
        type=_number("--warning-lead"),
        default=DEFAULT_WARNING_LEAD,
        help="points between the warning and the handoff target (default %(default)s)",
    )


def budget_from_args(args: argparse.Namespace) -> Budget:
    return Budget(
        limit=args.limit,
        output_reserve=args.reserve,
        threshold=args.threshold,
        warning_lead=args.warning_lead,
    )


def plan_json(budget: Budget) -> dict[str, Any]:
    """The ``policy plan --json`` object."""
    return {
        "limit": budget.limit,
        "output_reserve": budget.output_reserve,
        "usable_limit": budget.usable_limit,
        "threshold": budget.threshold,
        "effective_threshold": budget.effective_threshold,
        "mode": "off" if budget.off else "active",
        "handoff_target": budget.handoff_target,
        "warning_at": budget.warning_at,
    }


def steps_json(steps: Sequence[Step]) -> list[dict[str, Any]]:
    """The ``policy simulate --json`` list."""
    out: list[dict[str, Any]] = []
    for step in steps:
        d = step.decision
        item: dict[str, Any] = {
            "tokens": step.tokens,
            "decision": d.action.value,
            "stage": d.stage.value if d.stage else None,
            "window": step.window,
        }
        if d.skipped is not None:
            item["skipped"] = d.skipped.value
        out.append(item)
    return out


def _parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="ctxrelay policy",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="action", required=True, metavar="plan|simulate")
    plan = sub.add_parser("plan", help="show the derived points of a budget")
    sim = sub.add_parser("simulate", help="evaluate a sequence of request sizes")
    for p in (plan, sim):
        add_budget_arguments(p)
        p.add_argument(
            "--capability",
            choices=[c.value for c in Capability],
            default=Capability.FULL.value,
            help="wording variant of the handoff request (default %(default)s)",
        )
        p.add_argument("--text", action="store_true", help="also print the advisory wording")
        p.add_argument("--json", action="store_true", help="print only JSON")
    sim.add_argument(
        "--tokens",
        type=_token_list,
        required=True,
        help="comma-separated request sizes, one per dispatch",
    )
    sim.add_argument(
        "--advisory-tokens",
        type=_whole("--advisory-tokens"),
        default=0,
        help="estimated size of an advisory, for the headroom check (default 0)",
    )
    sim.add_argument(
        "--inactive", action="store_true", help="the mode is not active (no advisories)"
    )
    return parser


def _texts(budget: Budget, capability: Capability) -> dict[str, str]:
    if budget.off or budget.handoff_target is None:
        return {}
    texts: dict[str, str] = {}
    if budget.warning_at is not None:
        texts["warning"] = advisory_text(budget, Stage.WARNING, budget.warning_at, capability)
    texts["handoff"] = advisory_text(budget, Stage.HANDOFF, budget.handoff_target, capability)
    return texts


@handle_errors
def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    if args.action == "simulate" and args.advisory_tokens < 0:
        from ctxrelay.budget import BudgetValueError

        raise BudgetValueError("--advisory-tokens", args.advisory_tokens, "zero or more")
    budget = budget_from_args(args)
    capability = Capability(args.capability)
    if args.action == "plan":
        _plan(budget, capability, as_json=args.json, text=args.text)
    else:
        steps = simulate(
            budget,
            args.tokens,
            advisory_tokens=args.advisory_tokens,
            active=not args.inactive,
            capability=capability,
        )
        _simulate(budget, steps, capability, as_json=args.json, text=args.text)
    return 0


def _plan(budget: Budget, capability: Capability, *, as_json: bool, text: bool) -> None:
    data = plan_json(budget)
    if as_json:
        if text:
            data["texts"] = _texts(budget, capability)
        print_json(data)
        return
    from rich.table import Table

    table = Table(title="ctxrelay budget", show_header=False)
    table.add_column(style="bold")
    table.add_column(justify="right")
    for key, value in data.items():
        shown = "—" if value is None else (f"{value:,}" if isinstance(value, int) else value)
        table.add_row(key.replace("_", " "), str(shown))
    out = console()
    out.print(table)
    if text:
        for stage, wording in _texts(budget, capability).items():
            out.print(f"\n[bold]{stage}[/bold] ({capability.value}):\n{wording}")


_STYLE = {
    Action.CONTINUE: "green",
    Action.WARN: "yellow",
    Action.ROLLOVER: "magenta",
    Action.BLOCK: "red",
}


def _simulate(
    budget: Budget, steps: Sequence[Step], capability: Capability, *, as_json: bool, text: bool
) -> None:
    if as_json:
        print_json(steps_json(steps))
        return
    render_timeline(budget, steps, title="ctxrelay policy simulation")
    if text:
        out = console()
        for step in steps:
            if step.decision.stage is not None:
                wording = advisory_text(budget, step.decision.stage, step.tokens, capability)
                out.print(f"\n[bold]dispatch at {step.tokens:,} tokens:[/bold]\n{wording}")


def render_timeline(budget: Budget, steps: Sequence[Step], *, title: str) -> None:
    """A table of dispatches against the warning point, the target and the usable limit."""
    from rich.table import Table

    usable = budget.usable_limit
    target = budget.handoff_target
    warning = budget.warning_at
    marks = f"warning {warning:,}" if warning else "no warning"
    marks += f" · target {target:,}" if target else " · Off"
    table = Table(title=title, caption=f"{marks} · usable limit {usable:,}")
    for col, justify in (
        ("#", "right"),
        ("window", "right"),
        ("tokens", "right"),
        ("", "left"),
        ("decision", "left"),
        ("stage", "left"),
    ):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    width = 24
    for i, step in enumerate(steps, 1):
        d = step.decision
        filled = min(width, round(width * step.tokens / usable)) if usable else width
        bar = "█" * filled + "·" * (width - filled)
        stage = d.stage.value if d.stage else ""
        if d.skipped is not None:
            stage = f"{d.skipped.value} skipped (no headroom)"
        style = _STYLE[d.action]
        table.add_row(
            str(i),
            str(step.window),
            f"{step.tokens:,}",
            bar,
            f"[{style}]{d.action.value}[/{style}]",
            stage,
        )
    console().print(table)
