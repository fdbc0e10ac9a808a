"""The replay's two ends are what running both brackets in full gives: the high end is
replayed only where it can differ from the low end (``Rereads.differs``), and a replay
that skips it must not change a figure (``range_usd``, ``cost_usd``, the sweep's)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from ctxrelay.analyze import Policy, Sweep, analyze_session
from ctxrelay.analyze._bill import Pricer
from ctxrelay.analyze._replay import (
    Assumptions,
    Chain,
    ReplayResult,
    replay_end,
)
from ctxrelay.analyze._report import _touched
from ctxrelay.analyze._rereads import Bracket, FileTouch, Rereads
from ctxrelay.pricing import DEFAULT_PRICES
from ctxrelay.transcripts import Compaction, read_touches
from tests.analyze.test_ranges import _read_early_edit_late
from tests.conftest import corpus_path

POLICIES = (
    Policy("none"),
    Policy("compact"),
    Policy("handoff", 40),
    Policy("handoff", 60),
    Policy("mask", mask=10),
    Policy("handoff", 60, mask=20),
)
SWEEP = Sweep(20, 90, 5)


def _full(  # noqa: PLR0917 - the replay's inputs
    chain: Chain,
    assumptions: Assumptions,
    policy: Policy,
    files: tuple[tuple[FileTouch, ...], ...],
    results: tuple[int, ...] | None,
    compactions: tuple[Compaction, ...],
    bracket: Bracket,
) -> ReplayResult:
    """One end replayed in full, its re-reads on ``bracket``, whatever the other does."""
    rereads = Rereads(files, chain.segments, bracket)
    pricer = Pricer(DEFAULT_PRICES)
    return replay_end(chain, assumptions, policy, pricer, compactions, results, rereads)


def _sessions(tmp_path: Path) -> list[Path]:
    spotter = corpus_path("corpora/claude-code-transcripts")
    capture = corpus_path("corpora/claude-code-capture/projects")
    found = [
        p
        for root in (spotter, capture)
        for p in sorted(root.rglob("*.jsonl"))
        if "subagents" not in p.parts
    ]
    return [*found, _read_early_edit_late(tmp_path / "p" / "s.jsonl")]


def test_both_ends_equal_the_full_replays(tmp_path: Path) -> None:
    skipped = differed = 0
    for path in _sessions(tmp_path):
        report = analyze_session(path, policies=POLICIES, sweep=SWEEP)
        chain = report.chain
        assert chain is not None
        touched = _touched(chain, report.assumptions, POLICIES, SWEEP, partial(read_touches, path))
        if touched.files is None:
            continue
        compactions = report.transcript.compactions
        swept = [(Policy("handoff", p.threshold), p) for p in report.sweep]
        for result in report.replays:
            if result.policy.kind == "none":
                continue
            ends = [
                _full(
                    chain,
                    report.assumptions,
                    result.policy,
                    touched.files,
                    touched.results,
                    compactions,
                    bracket,
                )
                for bracket in ("edits", "touches")
            ]
            low, high = ends
            assert (result.cost_usd, result.rereads, result.reread_tokens) == (
                low.cost_usd,
                low.rereads,
                low.reread_tokens,
            ), f"{path.name} {result.policy}"
            assert (result.high_cost_usd, result.high_rereads, result.high_reread_tokens) == (
                high.cost_usd,
                high.rereads,
                high.reread_tokens,
            ), f"{path.name} {result.policy}"
            assert result.rows.rows == low.rows.rows
            if low.rollovers or low.forced_rollovers or low.compactions:
                same = high.rows.rows == low.rows.rows
                skipped += same
                differed += not same
        for policy, point in swept:
            low, high = (
                _full(chain, report.assumptions, policy, touched.files, None, (), bracket)
                for bracket in ("edits", "touches")
            )
            assert (point.cost_usd, point.high_usd) == (low.cost_usd, high.cost_usd), (
                f"{path.name} {policy}"
            )
    # Both cases were met: replays that restart whose high end is the low end, and
    # replays whose high end reads more.
    assert skipped, differed
    assert differed, skipped
