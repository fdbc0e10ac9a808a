"""Usage figures for scripted steps of the end-to-end tests, typed for ``Step(**…)``."""

from __future__ import annotations

from typing import TypedDict


class StepUsage(TypedDict, total=False):
    """The usage keyword arguments of ``ctxrelay.testing.Step``."""

    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int


def usage(context: int) -> StepUsage:
    """A response reporting ``context`` tokens of input, as a cached request would."""
    return {
        "input_tokens": 5,
        "cache_creation_input_tokens": 100,
        "cache_read_input_tokens": context - 105,
    }
