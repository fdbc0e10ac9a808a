"""The store side of a handoff, called as an integration calls it: ``publish_advisory``,
``window_opening``, ``seal_window`` and ``lead_in_text`` on a real SQLite store."""

from __future__ import annotations

import pytest

from ctxrelay.budget import Action, Budget
from ctxrelay.errors import StaleWindowError
from ctxrelay.runtime import (
    WindowState,
    lead_in_text,
    plan_dispatch,
    publish_advisory,
    seal_window,
    window_opening,
    window_state,
)
from ctxrelay.runtime.windows import NOTES_MAX_BYTES
from ctxrelay.store import NewRow
from tests.runtime.helpers import SMALL, Harness


def test_an_advisory_is_published_once_with_its_claim(harness: Harness) -> None:
    store = harness.store
    session = store.create_session()
    window = store.current_window(session.id)
    plan = plan_dispatch(SMALL, 5_200, window=WindowState(window.id, window.index))
    assert plan.action is Action.WARN
    row = publish_advisory(store, session.id, window.id, plan)
    assert row is not None
    assert (row.kind, row.text, dict(row.metadata)) == (
        "warning",
        plan.advisory_text,
        plan.advisory_metadata,
    )
    assert store.claims(window.id) == frozenset({"warning"})
    # A second attempt (another worker, a retry) publishes nothing more.
    assert publish_advisory(store, session.id, window.id, plan) is None
    assert [r.kind for r in store.rows(session.id)] == ["warning"]


def test_a_plan_without_an_advisory_publishes_nothing(harness: Harness) -> None:
    store = harness.store
    session = store.create_session()
    window = store.current_window(session.id)
    plan = plan_dispatch(SMALL, 100, window=WindowState(window.id, window.index))
    assert publish_advisory(store, session.id, window.id, plan) is None
    assert store.rows(session.id) == []
    assert store.claims(window.id) == frozenset()


def test_sealing_opens_the_next_window_with_its_lead_in(harness: Harness) -> None:
    store = harness.store
    notes = "# notes\n" + "x" * (NOTES_MAX_BYTES + 500)
    (harness.workspace / "context-notes.md").write_text(notes)
    session = store.create_session()
    first = store.current_window(session.id)
    unseen = store.append(
        session.id,
        first.id,
        [
            NewRow("tool_result", "wrote app.py", {"tool_call_id": "c1", "name": "write_file"}),
            NewRow("tool_result", "sealing", {"tool_call_id": "c2", "new_context": True}),
            NewRow("user", "also fix the docs"),
        ],
    )
    lead, trigger = window_opening(
        first,
        "new_context",
        workspace=harness.workspace,
        notes_file="context-notes.md",
        history_available=True,
        usable_limit=SMALL.usable_limit,
        unseen=unseen,
    )
    second = seal_window(
        store, session.id, first, "new_context", opening=(lead, trigger), usable_limit=8_000
    )
    assert second.index == 2
    assert [w.seal_reason for w in store.windows(session.id)] == ["new_context", None]
    sealed = store.rows(session.id, window_id=first.id)
    assert sealed[-1].kind == "boundary"
    assert dict(sealed[-1].metadata) == {"reason": "new_context", "budgetTokens": 8_000}

    opened = store.rows(session.id, window_id=second.id)
    assert [r.kind for r in opened] == ["lead_in", "user"]
    text = lead_in_text(opened[0])
    assert text.startswith(
        f"[ctxrelay] This is context window 2 (id {second.id}) of this session. "
        f"The previous window was {first.id} (sealed: new_context)."
    )
    size = len(notes.encode())
    assert f"(first {NOTES_MAX_BYTES:,} of {size:,} bytes)" in text
    assert notes[:NOTES_MAX_BYTES] in text
    assert notes not in text  # cut at the cap
    assert "`session_history`" in text
    assert opened[0].metadata["notes_bytes"] == size
    # The triggering message carries what the model had not seen, not the seal's result.
    body = opened[1].text or ""
    assert "wrote app.py" in body
    assert "also fix the docs" in body
    assert "sealing" not in body
    assert opened[1].metadata["carried_rows"] == [unseen[0].seq, unseen[2].seq]


def test_without_session_history_the_lead_in_says_nothing_can_be_recovered(
    harness: Harness,
) -> None:
    store = harness.store
    session = store.create_session()
    first = store.current_window(session.id)
    opening = window_opening(
        first,
        "forced",
        workspace=harness.workspace,
        notes_file="context-notes.md",
        history_available=False,
        usable_limit=SMALL.usable_limit,
    )
    seal_window(store, session.id, first, "forced", opening=opening, usable_limit=8_000)
    lead = store.rows(session.id)[1]
    assert "no notes file `context-notes.md`" in lead_in_text(lead)
    assert "cannot be recovered" in lead_in_text(lead)
    assert "session_history" not in lead_in_text(lead)


def test_a_window_is_sealed_once(harness: Harness) -> None:
    store = harness.store
    session = store.create_session()
    first = store.current_window(session.id)
    budget = Budget(limit=10_000, output_reserve=2_000)
    opening = window_opening(
        first,
        "forced",
        workspace=harness.workspace,
        notes_file="n.md",
        history_available=True,
        usable_limit=budget.usable_limit,
    )
    seal_window(store, session.id, first, "forced", opening=opening, usable_limit=8_000)
    with pytest.raises(StaleWindowError):
        seal_window(store, session.id, first, "forced", opening=opening, usable_limit=8_000)
    assert len(store.windows(session.id)) == 2


def test_window_state_reads_claims_and_the_largest_counted_request(harness: Harness) -> None:
    store = harness.store
    session = store.create_session()
    window = store.current_window(session.id)
    store.append(
        session.id,
        window.id,
        [
            NewRow("user", "task"),
            NewRow("assistant", "a", {"context_tokens": 8_100}),
            NewRow("assistant", "b", {"context_tokens": 7_000}),
            NewRow("assistant", "older, without counts"),
        ],
    )
    store.append_advisory(session.id, window.id, "warning", NewRow("warning", "w"))
    got_window, state = window_state(store, session.id)
    assert got_window == window
    assert state == WindowState(window.id, 1, frozenset({"warning"}), 8_100)
    # Planned on that state, an oversized request is an emergency: the provider already
    # counted one of this window above the usable limit.
    assert plan_dispatch(SMALL, 8_200, window=state).seal_reason == "emergency"
