"""What a stored session's handoffs saved, worked out by hand on a small session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxrelay.analyze import handoff_savings
from ctxrelay.budget import Budget
from ctxrelay.pricing import Prices, PriceTable
from ctxrelay.store import NewRow, Store, open_store

# USD per million tokens: writes 10, reads 1, nothing else, so the sums are easy to check.
PRICES = PriceTable(
    {"flat": Prices(input=10, output=0, cache_write_5m=10, cache_write_1h=10, cache_read=1)}
)


def _response(written: int, read: int) -> NewRow:
    usage = {
        "input_tokens": 0,
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": read,
        "output_tokens": 0,
    }
    return NewRow(
        "assistant", "ok", {"usage": usage, "model": "m", "context_tokens": written + read}
    )


def _two_windows(store: Store) -> str:
    session = store.create_session()
    first = store.current_window(session.id)
    # Window 1: 1,000 (cold) then 3,000; window 2 after the handoff: 500 (cold) then 1,500.
    store.append(session.id, first.id, [_response(1_000, 0), _response(2_000, 1_000)])
    second = store.rollover(
        session.id, first.id, "new_context", boundary=NewRow("boundary"), opening=[]
    )
    store.append(session.id, second.id, [_response(500, 0), _response(1_000, 500)])
    return session.id


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    handle = open_store(tmp_path / "s.db")
    yield handle
    handle.close()


def test_one_window_rereads_what_the_handoff_dropped(store: Store) -> None:
    sid = _two_windows(store)
    saved = handoff_savings(store, sid, Budget(200_000, 32_000), "flat", PRICES)
    # With handoff: writes 4,500 at $10/M, reads 1,500 at $1/M.
    assert saved.cost_usd == pytest.approx(0.0465)
    # One window: 1,000, 3,000, 3,000 (nothing new: no restart), 4,000; writes 4,000
    # (the restart's cold write is gone), reads 0 + 1,000 + 3,000 + 3,000.
    assert saved.cost_without_handoff_usd == pytest.approx(0.047)
    assert (saved.peak_context_tokens, saved.peak_context_without_handoff_tokens) == (3_000, 4_000)
    assert (saved.needed_without_handoff_tokens, saved.at_limit, saved.windows) == (4_000, 0, 2)
    assert saved.saved_usd == pytest.approx(0.0005)


def test_work_that_does_not_fit_is_capped_at_the_usable_limit(store: Store) -> None:
    sid = _two_windows(store)
    saved = handoff_savings(store, sid, Budget(4_000, 500), "flat", PRICES)
    # The last request needs 4,000 but the usable limit is 3,500: it still writes its
    # 1,000 new tokens and reads 2,500.
    assert saved.peak_context_without_handoff_tokens == 3_500
    assert (saved.needed_without_handoff_tokens, saved.at_limit) == (4_000, 1)
    assert saved.cost_without_handoff_usd == pytest.approx(0.0465)
    assert saved.as_json() == {
        "cost_usd": 0.0465,
        "cost_without_handoff_usd": 0.0465,
        "peak_context_tokens": 3_000,
        "peak_context_without_handoff_tokens": 3_500,
    }
