"""``ctxrelay policy plan|simulate``: the policy core on the command line (docs/contracts.md)."""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from ctxrelay.budget import (
    DEFAULT_WARNING_LEAD,
    Action,
    Budget,
    BudgetValueError,
    Capability,
    Stage,
    Step,
    advisory_text,
    simulate,
)
from ctxrelay.cli._common import (
    BUDGET_FLAGS,
    ArgumentParser,
    console,
    flag_requirement,
    handle_errors,
    numeral_pattern,
    print_json,
    shown_value,
)

__all__ = [
    "FlagValueError",
    "add_budget_arguments",
    "budget_from_args",
    "main",
    "parse_percent",
    "parse_token_list",
    "parse_whole",
    "plan_json",
    "render_timeline",
    "steps_json",
]

_DESCRIPTION = """\
Plan a context budget or replay dispatches through the policy.

  plan      the derived points: usable limit, handoff target, warning point
  simulate  the decision for each request size in order, claims carried per window

Example:
  ctxrelay policy plan --limit 200000 --reserve 32000 --threshold 60
  ctxrelay policy simulate --limit 200000 --reserve 32000 --threshold 60 \\
      --tokens 90000,100000,110000,121000,125000,168001,50000
"""

_PLAN_HELP = """\
Show the points a budget derives: the usable limit (limit - reserve, where a request
is forced into a new window), the handoff target (threshold percent of the limit, never
below 10%) and the warning point (warning-lead points before the target).

Examples:
  ctxrelay policy plan --limit 200000 --reserve 32000 --threshold 60
  ctxrelay policy plan --limit 200000 --reserve 32000 --threshold 62.5 --json
  ctxrelay policy plan --limit 200000 --reserve 32000 --threshold 100   # Off
  ctxrelay policy plan --limit 200000 --reserve 32000 --threshold 60 \\
      --text --capability conditional      # the advisory wording
"""

_SIMULATE_HELP = """\
Decide each request size in order, as a host that publishes every advisory would:
claims carry across dispatches within a window, a rollover seals the window and the
next dispatch starts a new one with no claims.

Examples:
  ctxrelay policy simulate --limit 200000 --reserve 32000 --threshold 60 \\
      --tokens 90000,100000,110000,121000,125000,168001,50000
  # an advisory of 4000 tokens has no room at 165000: the handoff is skipped
  ctxrelay policy simulate --limit 200000 --reserve 32000 --threshold 60 \\
      --tokens 118000,165000,168001 --advisory-tokens 4000 --json
"""


class FlagValueError(BudgetValueError):
    """A flag's value is unusable; the message names the flag as the user typed it and
    the value as written (``--threshold must be … got 101``, not ``threshold … 101.0``)."""

    def __init__(self, flag: str, text: object, requirement: str) -> None:
        super().__init__(flag, text, requirement)
        self.args = (f"{flag} must be {requirement}, got {shown_value(text)}",)


_WHOLE = re.compile(r"[+-]?[0-9]+(?:_[0-9]+)*")
_MAX_DIGITS = 15  # a float keeps any 15 significant decimal digits exactly

# Every field a policy error can name -> the flag that sets it.
_FLAGS = {**BUDGET_FLAGS, "tokens": "--tokens", "advisory_tokens": "--advisory-tokens"}
_VALUE_FLAGS = frozenset(_FLAGS.values())


def parse_whole(flag: str, value: object) -> int:
    """A whole number as typed (``200000`` or ``200_000``); sign checks are the core's."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value).strip()
    if not _WHOLE.fullmatch(text):
        raise FlagValueError(flag, str(value), "a whole number of tokens")
    return int(text)


def parse_percent(flag: str, value: object) -> float:
    """A decimal percentage as typed; refused when a float would not keep every digit,
    because the points are floored from it and must match what the user wrote."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip()
    if not numeral_pattern().fullmatch(text):
        raise FlagValueError(flag, str(value), "a number (a percentage such as 60 or 62.5)")
    number = float(text)
    if math.isfinite(number) and Fraction(repr(number)) != Fraction(text):
        raise FlagValueError(flag, text, f"a number of at most {_MAX_DIGITS} significant digits")
    return number


def parse_token_list(flag: str, text: str) -> list[int]:
    """``N1,N2,…``: whole numbers of tokens, zero or more."""
    values: list[int] = []
    for part in text.split(","):
        item = part.strip()
        if not _WHOLE.fullmatch(item) or item.startswith("-"):
            raise FlagValueError(
                flag, item, "a comma-separated list of whole numbers of tokens, zero or more"
            )
        values.append(int(item))
    return values


def _glue_values(argv: list[str]) -> list[str]:
    """Join ``--tokens -2,5`` into ``--tokens=-2,5``: argparse would take ``-2,5`` for an
    option and say "expected one argument" instead of naming the bad value."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if arg in _VALUE_FLAGS and nxt is not None and re.match(r"-[0-9.]", nxt):
            out.append(f"{arg}={nxt}")
            i += 2
        else:
            out.append(arg)
            i += 1
    return out


def add_budget_arguments(parser: argparse.ArgumentParser) -> None:
    """The budget options every command that evaluates the policy accepts; the values
    stay text until :func:`budget_from_args`, which names the flag in any error."""
    parser.add_argument(
        "--limit", required=True, metavar="TOKENS", help="model context window (tokens)"
    )
    parser.add_argument(
        "--reserve",
        required=True,
        metavar="TOKENS",
        help="output reserve (tokens); usable limit = limit - reserve",
    )
    parser.add_argument(
        "--threshold",
        required=True,
        metavar="PERCENT",
        help="the slider, percent of the limit (decimals allowed; 100 = Off; floor 10)",
    )
    parser.add_argument(
        "--warning-lead",
        default=DEFAULT_WARNING_LEAD,
        metavar="POINTS",
        help="points between the warning and the handoff target (default %(default)s)",
    )


def budget_from_args(args: argparse.Namespace) -> Budget:
    """The budget of :func:`add_budget_arguments`' flags; errors name the flag as typed."""
    typed = {
        "limit": args.limit,
        "output_reserve": args.reserve,
        "threshold": args.threshold,
        "warning_lead": args.warning_lead,
    }
    try:
        return Budget(
            limit=parse_whole("--limit", args.limit),
            output_reserve=parse_whole("--reserve", args.reserve),
            threshold=parse_percent("--threshold", args.threshold),
            warning_lead=parse_percent("--warning-lead", args.warning_lead),
        )
    except FlagValueError:
        raise
    except BudgetValueError as exc:
        raise FlagValueError(
            _FLAGS.get(exc.field, exc.field),
            str(typed.get(exc.field, exc.value)),
            flag_requirement(exc.requirement, _FLAGS),
        ) from None


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
    plan = sub.add_parser(
        "plan",
        help="show the derived points of a budget",
        description=_PLAN_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sim = sub.add_parser(
        "simulate",
        help="evaluate a sequence of request sizes",
        description=_SIMULATE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
        required=True,
        metavar="N1,N2,...",
        help="comma-separated request sizes, one per dispatch",
    )
    sim.add_argument(
        "--advisory-tokens",
        default="0",
        metavar="TOKENS",
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


@handle_errors(flags=_FLAGS)
def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(_glue_values(list(argv)))
    budget = budget_from_args(args)
    capability = Capability(args.capability)
    if args.action == "plan":
        _plan(budget, capability, as_json=args.json, text=args.text)
        return 0
    tokens = parse_token_list("--tokens", args.tokens)
    advisory = parse_whole("--advisory-tokens", args.advisory_tokens)
    if advisory < 0:
        raise FlagValueError("--advisory-tokens", args.advisory_tokens, "zero or more")
    steps = simulate(
        budget,
        tokens,
        advisory_tokens=advisory,
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
    from rich.table import Table  # noqa: PLC0415 — rich: --json draws nothing

    table = Table(title="ctxrelay budget", show_header=False)
    table.add_column(style="bold")
    table.add_column(justify="right")
    for key, value in data.items():
        if value is None:
            shown = "—"
        elif isinstance(value, float):
            shown = repr(value).removesuffix(".0")  # 60, 62.5: the slider as typed
        else:
            shown = f"{value:,}" if isinstance(value, int) else str(value)
        table.add_row(key.replace("_", " "), str(shown))
    out = console()
    out.print(table)
    if text:
        from rich.markup import escape  # noqa: PLC0415 — rich: --json draws nothing

        # The wording starts with "[ctxrelay]", which rich would read as a markup tag.
        for stage, wording in _texts(budget, capability).items():
            out.print(f"\n[bold]{stage}[/bold] ({capability.value}):\n{escape(wording)}")


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
        items = steps_json(steps)
        if text:
            for item, step in zip(items, steps, strict=True):
                if step.decision.stage is not None:
                    item["text"] = advisory_text(
                        budget, step.decision.stage, step.tokens, capability
                    )
        print_json(items)
        return
    render_timeline(budget, steps, title="ctxrelay policy simulation")
    if text:
        from rich.markup import escape  # noqa: PLC0415 — rich: --json draws nothing

        out = console()
        for step in steps:
            if step.decision.stage is not None:
                wording = advisory_text(budget, step.decision.stage, step.tokens, capability)
                out.print(f"\n[bold]dispatch at {step.tokens:,} tokens:[/bold]\n{escape(wording)}")


def render_timeline(budget: Budget, steps: Sequence[Step], *, title: str) -> None:
    """A table of dispatches against the warning point, the target and the usable limit."""
    from rich.table import Table  # noqa: PLC0415 — rich: --json draws nothing

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
    skipped = False
    for i, step in enumerate(steps, 1):
        d = step.decision
        filled = min(width, round(width * step.tokens / usable)) if usable else width
        bar = "█" * filled + "·" * (width - filled)
        stage = d.stage.value if d.stage else ""
        if d.skipped is not None:
            stage = f"{d.skipped.value} skipped"
            skipped = True
        style = _STYLE[d.action]
        table.add_row(
            str(i),
            str(step.window),
            f"{step.tokens:,}",
            bar,
            f"[{style}]{d.action.value}[/{style}]",
            stage,
        )
    if skipped:
        table.caption = f"{table.caption}\nskipped: due, but no headroom under the usable limit"
    console().print(table)
