"""Observation masking: ``mask:N`` and ``handoff:P+mask:N`` parsed, replayed in batches
and priced with the cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxrelay.analyze import Policy, analyze_session, parse_policy
from ctxrelay.analyze._mask import MASK_PLACEHOLDER_TOKENS
from ctxrelay.errors import ConfigError
from tests.analyze._sessions import Session, file_text

RESULT = 3_000  # each request's tool result, in tokens


def _tool_heavy(path: Path, requests: int = 45) -> Path:
    """Every response runs a command whose result is about ``RESULT`` tokens."""
    s = Session(path)
    context = 20_000
    for _ in range(requests):
        s.request(context, tools=[("Bash", {"command": "make"}, file_text(RESULT))])
        context += 200 + RESULT  # the output before and the result
    return s.write()


def test_mask_policies_parse_and_print() -> None:
    assert parse_policy("mask:10") == Policy("mask", mask=10)
    assert str(parse_policy("mask:10")) == "mask:10"
    combined = parse_policy("handoff:45+mask:20")
    assert combined == Policy("handoff", 45, 20)
    assert str(combined) == "handoff:45+mask:20"
    for bad in ("mask", "mask:0", "mask:x", "compact+mask:5", "handoff:45+mask"):
        with pytest.raises(ConfigError):
            parse_policy(bad)


def test_mask_keeps_the_newest_results_and_lowers_the_peak(tmp_path: Path) -> None:
    path = _tool_heavy(tmp_path / "p" / "s.jsonl")
    report = analyze_session(path, policies=[Policy("none"), Policy("mask", mask=10)])
    none, mask = report.replays
    assert mask.mask_batches >= 3
    # Batches every 10 requests: between 10 and 20 results stay whole, the rest are
    # placeholders.
    most = 20_000 + 45 * 200 + 20 * RESULT + 45 * MASK_PLACEHOLDER_TOKENS
    assert mask.peak_context_tokens <= most + 2 * RESULT
    assert mask.peak_context_tokens < none.peak_context_tokens
    assert mask.range_usd == (mask.cost_usd, mask.cost_usd)  # no restart, no re-read


def test_mask_is_priced_with_the_cache(tmp_path: Path) -> None:
    path = _tool_heavy(tmp_path / "p" / "s.jsonl")
    report = analyze_session(path, policies=[Policy("mask", mask=10)])
    (mask,) = report.replays
    rows = [r for r in mask.requests if r.kind == "recorded"]
    batches = [
        i
        for i in range(1, len(rows))
        if rows[i].usage.cache_read_input_tokens < rows[i - 1].tokens - 10
    ]
    assert len(batches) == mask.mask_batches >= 3
    for i in range(1, len(rows)):
        u = rows[i].usage
        if i in batches:
            # The cache holds what comes before the oldest result masked; the rest,
            # the placeholders and the newest results, is written again.
            assert u.cache_creation_input_tokens > RESULT
        else:
            # Between batches the context only grows: its predecessor is read whole.
            assert u.cache_read_input_tokens >= rows[i - 1].tokens - 10
    # The rewrites cost: a batch writes more than it would have grown.
    written = sum(r.usage.cache_creation_input_tokens for r in rows)
    none = analyze_session(path, policies=[Policy("none")]).replays[0]
    assert written > none.usage.cache_creation_input_tokens


def test_handoff_with_mask_is_ranged_like_handoff(tmp_path: Path) -> None:
    path = _tool_heavy(tmp_path / "p" / "s.jsonl", requests=45)
    report = analyze_session(path, policies=[Policy("handoff", 40), Policy("handoff", 40, 10)])
    handoff, both = report.replays
    assert handoff.rollovers >= 1
    assert both.mask_batches >= 1
    assert both.rollovers <= handoff.rollovers  # masking delays the handoff point
    assert both.range_usd is not None
    assert report.as_json()["whatif"]["policies"][1]["policy"] == "handoff:40+mask:10"
