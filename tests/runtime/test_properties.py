"""Random sessions through the real loop: the invariants hold whatever the model does."""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxrelay.budget import Budget
from ctxrelay.runtime import Runtime, SessionConfig
from ctxrelay.runtime.providers.scripted import ScriptedProvider, load_steps
from ctxrelay.store import SEAL_REASONS, open_store

BUDGET = Budget(limit=6_000, output_reserve=1_000, threshold=55)

_call = st.one_of(
    st.builds(lambda n: {"name": "read_file", "input": {"path": f"f{n}.txt"}}, st.integers(0, 3)),
    st.builds(
        lambda n: {"name": "write_file", "input": {"path": "context-notes.md", "content": "n" * n}},
        st.integers(0, 600),
    ),
    st.just({"name": "new_context", "input": {}}),
    st.just({"name": "session_history", "input": {"action": "list"}}),
    st.just({"name": "no_such_tool", "input": {}}),
)
_step = st.fixed_dictionaries(
    {"text": st.text(max_size=40), "tool_calls": st.lists(_call, min_size=1, max_size=3)},
    optional={"input_tokens": st.integers(0, 7_000)},
)


_counted_step = st.fixed_dictionaries(
    {"text": st.text(max_size=40), "tool_calls": st.lists(_call, min_size=1, max_size=3)}
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_step, min_size=1, max_size=14), st.integers(0, 2_000))
def test_invariants_hold_for_any_script(steps: list[dict[str, Any]], file_size: int) -> None:
    _check(steps, file_size)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_counted_step, min_size=1, max_size=14), st.integers(0, 2_000))
def test_a_model_that_counts_never_receives_an_oversized_request(
    steps: list[dict[str, Any]], file_size: int
) -> None:
    # Without input_tokens the scripted model reports its own count of each request,
    # as a real provider does: the loop's estimate, calibrated on it, must keep every
    # request under the usable limit by the model's count.
    for entry in _check(steps, file_size):
        assert entry["counted_tokens"] <= BUDGET.usable_limit, entry


def _check(steps: list[dict[str, Any]], file_size: int) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = root / "ws"
        ws.mkdir()
        for i in range(4):
            (ws / f"f{i}.txt").write_text("r" * (file_size * (i + 1)))
        log = root / "received.jsonl"
        store = open_store(root / "s.db")
        try:
            provider = ScriptedProvider(load_steps(steps), log=log)
            config = SessionConfig(budget=BUDGET, workspace=ws)
            result = asyncio.run(Runtime(store, provider).start("go", config).run())
            assert result.status in ("done", "paused")
            if result.status == "paused":
                assert result.reason == "too_large"
            windows = store.windows(result.session_id)
            assert all(w.seal_reason in SEAL_REASONS for w in windows[:-1])
            assert windows[-1].seal_reason is None
            rows = store.rows(result.session_id)
            stages = Counter(
                (r.window_id, r.metadata["stage"]) for r in rows if r.kind == "warning"
            )
            assert all(n == 1 for n in stages.values())  # at most one of each per window
            assert "flush" not in {r.kind for r in rows}
            received = [json.loads(line) for line in log.read_text().splitlines()]
            for entry in received:
                assert entry["estimated_tokens"] <= BUDGET.usable_limit
                assert entry["loop_bytes"] == entry["bytes"]
            # every tool call has exactly one result
            calls = [r.metadata["id"] for r in rows if r.kind == "tool_call"]
            results = [r.metadata["tool_call_id"] for r in rows if r.kind == "tool_result"]
            assert sorted(calls) == sorted(results)
            return received
        finally:
            store.close()
