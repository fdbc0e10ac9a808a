from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxrelay.runtime.estimate import (
    DEFAULT_BYTES_PER_TOKEN,
    MAX_BYTES_PER_TOKEN,
    MIN_BYTES_PER_TOKEN,
    SAFETY_MARGIN,
    BytesPerTokenEstimator,
    request_bytes,
)
from ctxrelay.runtime.model import (
    Message,
    ModelRequest,
    TextBlock,
    TokenEstimator,
    ToolCall,
    ToolResultBlock,
    ToolSpec,
)


def test_is_a_token_estimator() -> None:
    assert isinstance(BytesPerTokenEstimator(), TokenEstimator)


def test_conservative_before_the_first_response() -> None:
    est = BytesPerTokenEstimator()
    assert not est.calibrated
    # 4,000 bytes of prose is about 1,000 tokens; the default says more.
    assert est.estimate("a" * 4_000) == math.ceil(4_000 * SAFETY_MARGIN / DEFAULT_BYTES_PER_TOKEN)
    assert est.estimate("a" * 4_000) > 1_000


def test_calibrates_from_reported_usage() -> None:
    est = BytesPerTokenEstimator()
    est.observe(40_000, 10_000)
    assert est.calibrated
    assert est.bytes_per_token == 4.0
    assert est.estimate("é" * 2_000) == math.ceil(4_000 * SAFETY_MARGIN / 4.0)  # UTF-8 bytes


@pytest.mark.parametrize(
    ("sent", "reported", "ratio"),
    [(100, 10_000, MIN_BYTES_PER_TOKEN), (100_000, 10, MAX_BYTES_PER_TOKEN)],
)
def test_calibration_is_clamped(sent: int, reported: int, ratio: float) -> None:
    est = BytesPerTokenEstimator()
    est.observe(sent, reported)
    assert est.bytes_per_token == ratio


def test_meaningless_observations_are_ignored() -> None:
    est = BytesPerTokenEstimator()
    est.observe(0, 100)
    est.observe(100, 0)
    assert not est.calibrated
    assert est.estimate("") == 0


@given(st.integers(1, 10**7), st.integers(1, 10**6), st.integers(0, 10**6))
def test_never_below_the_calibrated_count(sent: int, reported: int, size: int) -> None:
    est = BytesPerTokenEstimator()
    est.observe(sent, reported)
    # content tokenizing like the calibration request is never under-counted
    assert est.estimate_bytes(size) >= math.floor(size / est.bytes_per_token)


def test_request_bytes_counts_every_part() -> None:
    base = ModelRequest(system="sys", messages=[Message("user", (TextBlock("hi"),))])
    bigger = ModelRequest(
        system="sys",
        messages=[
            Message("user", (TextBlock("hi"),)),
            Message("assistant", (), (ToolCall("1", "read_file", {"path": "a"}),)),
            Message("user", (ToolResultBlock("1", "content"),)),
        ],
        tools=[ToolSpec("read_file", "read", {"type": "object"})],
    )
    assert request_bytes(bigger) > request_bytes(base) > 0
