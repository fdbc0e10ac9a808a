"""``--plot FILE.png``: context curves of each session under each replayed policy.

A policy has one colour in every panel (:func:`colors`): the recording is the wide pale
grey line, each replayed policy its own colour, its bounds (compact's threshold, a
handoff's target and warning) drawn in it, and the window's limits in black. The
cumulative panel's time axis is dates to scale: a day without a request is a gap, not
skipped."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import date
from typing import Any

from ctxrelay.analyze._groups import ReportRow
from ctxrelay.analyze._replay import ReplayResult
from ctxrelay.analyze._report import SessionReport, short_name
from ctxrelay.budget import Budget
from ctxrelay.errors import MissingExtraError

__all__ = ["MAX_PLOTTED_SESSIONS", "colors", "plot_sessions"]

MAX_PLOTTED_SESSIONS = 6
"""More panels than this stop being readable; the sessions with most requests are drawn."""

MIN_PLOTTED_REQUESTS = 20
"""Shorter sessions are left out of the plot (they never come near a limit)."""

_COLORS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"]
"""The replayed policies' colours, in the order they were asked for; no grey or black,
which are the recording's and the window's."""
RECORDED = "#9a9a9a"
"""The recording (``none``), in every panel."""


def colors(names: Sequence[str]) -> dict[str, str]:
    """The colour of each policy of ``names`` (``none``, the recording, is grey); the
    same map draws every panel, so a colour means one policy throughout."""
    out: dict[str, str] = {}
    for name in names:
        if name == "none":
            out[name] = RECORDED
        elif name not in out:
            replayed = sum(1 for n in out if n != "none")
            out[name] = _COLORS[replayed % len(_COLORS)]
    return out


def _pyplot() -> tuple[Any, Any]:
    try:
        import matplotlib  # noqa: PLC0415 — matplotlib (extra plot), for --plot only

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415 — matplotlib (extra plot)
        from matplotlib.ticker import FuncFormatter  # noqa: PLC0415 — matplotlib (extra plot)
    except ImportError:
        raise MissingExtraError("ctxrelay analyze --plot", "plot") from None
    return plt, FuncFormatter


def _xs(result: ReplayResult) -> list[float]:
    """Recorded requests at their index; requests a policy added sit just after the
    recorded request they follow, so every policy shares one x axis."""
    xs: list[float] = []
    last = -1.0
    added = 0
    for request in result.requests:
        if request.recorded is not None:
            last, added = float(request.recorded), 0
            xs.append(last)
        else:
            added += 1
            xs.append(last + 0.3 * added)
    return xs


def _label(result: ReplayResult) -> str:
    money = "unpriced" if result.cost_usd is None else f"${result.cost_usd:,.2f}"
    events = []
    if result.compactions:
        events.append(f"{result.compactions} compaction{'s' * (result.compactions > 1)}")
    restarts = result.rollovers + result.forced_rollovers
    if restarts:
        events.append(f"{restarts} rollover{'s' * (restarts > 1)}")
    tail = f", {', '.join(events)}" if events else ""
    return f"{result.policy}: {money}{tail}"


def _levels(ax: Any, *lines: tuple[int | None, str, str, float, str]) -> None:
    """Horizontal lines ``(tokens, color, style, width, name)``, labelled with their
    level; a level of ``None`` (a bound the policy does not have) draws nothing."""
    for level, color, style, width, name in lines:
        if level is not None:
            ax.axhline(
                level, color=color, linestyle=style, linewidth=width, label=f"{name} {level:,}"
            )


def _day(key: str) -> date | None:
    try:
        return date.fromisoformat(key)
    except ValueError:
        return None


def _cumulative(
    ax: Any, days: Sequence[ReportRow], formatter: Any, palette: dict[str, str]
) -> None:
    """Cost by day, summed from the first day: recorded, and each policy's what-if, on a
    date axis to scale (flat across the days without a request)."""
    dated = [(d, _day(d.key)) for d in days]
    dated = [(d, when) for d, when in dated if when is not None]
    xs = [when for _, when in dated]

    def running(values: list[float | None]) -> list[float]:
        total, out = 0.0, []
        for v in values:
            total += v or 0.0
            out.append(total)
        return out

    ax.plot(
        xs, running([d.cost_usd for d, _ in dated]), color=RECORDED, linewidth=4, alpha=0.55,
        label="recorded", zorder=1, drawstyle="steps-post", marker="o", markersize=2.5,
    )  # fmt: skip
    names = list(days[0].policies) if days else []
    for name in (n for n in names if n != "none"):
        ax.plot(
            xs,
            running([d.policy_cost(name) for d, _ in dated]),
            color=palette.get(name, "black"),
            linewidth=1.3,
            label=name,
            zorder=2,
            drawstyle="steps-post",
        )
    ax.xaxis_date()
    for tick in ax.get_xticklabels():
        tick.set_fontsize(7)
    ax.set_title("Cumulative cost by day, recorded and under each policy", fontsize=10)
    ax.set_ylabel("USD")
    ax.yaxis.set_major_formatter(formatter(lambda v, _: f"${v:,.0f}"))
    ax.grid(alpha=0.25)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def plot_sessions(
    reports: Sequence[SessionReport],
    path: str | os.PathLike[str],
    *,
    daily: Sequence[ReportRow] | None = None,
) -> list[SessionReport]:
    """Draw up to :data:`MAX_PLOTTED_SESSIONS` sessions into a PNG; returns those drawn.
    With ``daily`` (rows by day) a first panel shows the cumulative cost by day."""
    plt, formatter = _pyplot()
    ranked = sorted(reports, key=lambda r: -r.transcript.requests)
    # A session of a handful of requests draws a dot; show them only if nothing else.
    chosen = [r for r in ranked if r.transcript.requests >= MIN_PLOTTED_REQUESTS]
    chosen = (chosen or ranked[:1])[:MAX_PLOTTED_SESSIONS]
    extra = 1 if daily else 0
    panels = max(1, len(chosen) + extra)
    fig, axes = plt.subplots(panels, 1, figsize=(12, 3.4 * panels), squeeze=False)
    palette = colors([str(r.policy) for report in reports for r in report.replays])
    if daily:
        _cumulative(axes[0][0], daily, formatter, palette)
    for ax, report in zip((row[0] for row in axes[extra:]), chosen, strict=False):
        a = report.assumptions
        _levels(
            ax,
            (a.limit, "black", "-", 1.2, "limit"),
            (a.usable_limit, "black", "--", 0.8, "usable"),
            (a.compact_at, palette.get("compact", "black"), ":", 0.9, "auto-compact"),
        )
        for result in report.replays:
            color = palette[str(result.policy)]
            xs = _xs(result)
            ys = [r.tokens for r in result.requests]
            if result.policy.kind == "none":
                # The recording: wide and pale underneath, so a replay that matches it
                # (compact often does, to the request) stays visible on top.
                ax.plot(
                    xs, ys, color=RECORDED, linewidth=4, alpha=0.55, label=_label(result),
                    zorder=1,
                )  # fmt: skip
            else:
                ax.plot(xs, ys, color=color, linewidth=1.3, label=_label(result), zorder=2)
            restarts = result.restarts
            if restarts:
                ax.scatter(
                    [xs[i - 1] for i in restarts],
                    [ys[i - 1] for i in restarts],
                    marker="v",
                    color=color,
                    s=36,
                    zorder=3,
                )
            if result.policy.kind == "handoff" and result.policy.threshold is not None:
                budget = Budget(a.limit, a.output_reserve, result.policy.threshold)
                _levels(
                    ax,
                    (budget.handoff_target, color, "-.", 0.9, f"{result.policy} target"),
                    (budget.warning_at, color, ":", 0.8, f"{result.policy} warning"),
                )
        t = report.transcript
        ax.set_title(
            f"{short_name(report.name)}  ·  {t.model or 'unknown model'}  ·  "
            f"{t.requests} requests  (▼ rollover or compaction)",
            fontsize=10,
        )
        ax.set_xlabel("recorded request")
        ax.set_ylabel("context tokens")
        ax.set_ylim(0, a.limit * 1.05)
        ax.yaxis.set_major_formatter(formatter(lambda v, _: f"{v / 1000:.0f}k"))
        ax.grid(alpha=0.25)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    fig.savefig(os.fspath(path), dpi=90)
    plt.close(fig)
    return chosen
