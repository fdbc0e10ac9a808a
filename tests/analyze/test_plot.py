"""``--plot``: one colour per policy in every panel, and the cumulative panel's date axis
to scale (a day without a request is a gap)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ctxrelay.analyze._bill import Pricer
from ctxrelay.analyze._groups import group_reports
from ctxrelay.analyze._plot import RECORDED, _cumulative, _pyplot, colors, plot_sessions
from ctxrelay.analyze._policies import parse_policies
from ctxrelay.analyze._report import analyze_session
from ctxrelay.pricing import DEFAULT_PRICES
from tests.transcripts._lines import assistant, write

if TYPE_CHECKING:
    from pathlib import Path

pytest.importorskip("matplotlib", reason="the plot extra is not installed")


def test_a_policy_has_one_colour_whatever_else_is_replayed() -> None:
    with_none = colors(["none", "compact", "handoff:45"])
    without = colors(["compact", "handoff:45"])
    assert with_none["none"] == RECORDED
    assert with_none["compact"] == without["compact"]
    assert with_none["handoff:45"] == without["handoff:45"]
    assert len(set(with_none.values())) == 3
    assert RECORDED not in without.values()


def test_the_cumulative_panel_is_to_scale_in_time_and_in_the_policies_colours(
    tmp_path: Path,
) -> None:
    lines = []
    for n, day in enumerate(("10", "11", "14")):  # no request on the 12th and 13th
        line = assistant(f"m{n}", read=20_000 + n, created=500, output=50)
        line["timestamp"] = f"2026-02-{day}T12:00:00.000Z"
        lines.append(line)
    path = write(tmp_path / "s.jsonl", lines)
    policies = parse_policies(["compact", "handoff:45"])
    report = analyze_session(path, policies=policies)
    days = group_reports([report], Pricer(DEFAULT_PRICES), by="day")
    plt, formatter = _pyplot()
    fig, ax = plt.subplots()
    palette = colors([str(p) for p in policies])
    _cumulative(ax, days, formatter, palette)
    recorded, *replayed = ax.get_lines()
    xs = recorded.get_xydata()[:, 0]
    assert list(xs[1:] - xs[:-1]) == [1.0, 3.0]  # days apart, on the axis too
    assert recorded.get_color() == RECORDED
    assert [line.get_color() for line in replayed] == [palette["compact"], palette["handoff:45"]]
    plt.close(fig)
    assert plot_sessions([report], tmp_path / "p.png", daily=days) == [report]
