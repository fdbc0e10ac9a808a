"""The reconciliation with a framework's memory, on its own: the kill matrix's cases
(``test_crashes.py``) and issue 34's as data. Keys are letters; ``p`` is the first
prompt, ``r1`` a reply whose tool call is ``c1``, ``t1`` that call's result."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from ctxrelay.integrations._reconcile import Call, Part, Reconciled, first_new, reconcile

_PARTS = {
    "p": [Part("user")],
    "q": [Part("user")],
    "continue": [Part("user")],
    "r1": [Part("assistant"), Part("tool_call", "c1")],
    "r2": [Part("assistant")],
    "t1": [Part("tool_result", "c1")],
    "t2": [Part("tool_result", "c2")],
    "summary": [Part("user")],
}
C1 = Call("c1", "slow")


@dataclass(frozen=True)
class Case:
    id: str
    items: list[str]
    stored: list[str]
    pending: list[Call]
    expect: Reconciled
    ending: bool = False


CASES = [
    # The usual call: the framework's memory grew by the new prompt.
    Case("grown", ["p", "r2", "q"], ["p", "r2"], [], Reconciled((2,))),
    # A run given only its new input (no framework memory).
    Case("new-input-only", ["q"], ["p", "r2"], [], Reconciled((0,))),
    # Issue 34: the first prompt asked again, no framework memory: a new prompt.
    Case("repeated-first-prompt", ["p"], ["p", "r2"], [], Reconciled((0,))),
    # ... and with the framework's memory: the memory is old, the last item new.
    Case("repeated-with-memory", ["p", "r2", "p"], ["p", "r2"], [], Reconciled((2,))),
    # Kill matrix, mid-first-request: the prompt whose request was lost, retried.
    Case("mid-first-request", ["p"], ["p"], [], Reconciled(())),
    # Kill matrix, mid-tool: the tool never returned; the resume answers it interrupted.
    Case(
        "mid-tool",
        ["p", "r1", "continue"],
        ["p", "r1"],
        [C1],
        Reconciled((2,), (C1,)),
    ),
    # Kill matrix, after-result: the result reached the framework's memory, not the
    # store: it is recorded as it is, and nothing is answered interrupted.
    Case("after-result", ["p", "r1", "t1", "continue"], ["p", "r1"], [C1], Reconciled((2, 3))),
    # Kill matrix, mid-request: the result was stored, its request was in flight.
    Case("mid-request", ["p", "r1", "t1", "continue"], ["p", "r1", "t1"], [], Reconciled((3,))),
    # A resent memory that lost the tail ctxrelay stored (a crash before it saved).
    Case("memory-lost-tail", ["p", "r1", "t1", "q"], ["p", "r1", "t1", "r2"], [], Reconciled((3,))),
    # A memory cut short at its head (a summary in place of the oldest items).
    Case("summarized-head", ["summary", "t1", "q"], ["p", "r1", "t1"], [], Reconciled((2,))),
    # A dangling call with nothing else new still gets its answer.
    Case("dangling-only", ["p", "r1"], ["p", "r1"], [C1], Reconciled((), (C1,))),
    # Issue 34: a run that ends (a usage limit, a tool's exception) after the tool ran:
    # the result exists and is recorded as it is; no "interrupted" answer.
    Case("ending-with-result", ["p", "r1", "t1"], ["p", "r1"], [C1], Reconciled((2,)), True),
    Case("ending-without-result", ["p", "r1"], ["p", "r1"], [C1], Reconciled(()), True),
    # At a run's end only results of the open calls are recorded, never another item.
    Case("ending-other-items", ["p", "r1", "t2", "q"], ["p", "r1"], [C1], Reconciled(()), True),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_reconcile(case: Case) -> None:
    parts = [_PARTS[k] for k in case.items]
    got = reconcile(case.items, parts, case.stored, case.pending, ending=case.ending)
    assert got == case.expect


def test_an_empty_store_records_everything() -> None:
    assert first_new(["p", "r2"], []) == 0
    assert reconcile(["p"], [_PARTS["p"]], [], []) == Reconciled((0,))


def test_only_the_newest_items_are_read() -> None:
    """The usual call reads the items from the end as far as the last stored one (a
    framework that rebuilds a long history at each call is not keyed whole)."""
    read: list[int] = []

    class Keys(list[str]):
        def __getitem__(self, i: int) -> str:  # type: ignore[override]
            read.append(i)
            return str(list.__getitem__(self, i))

    keys = Keys(["p", *[f"h{i}" for i in range(1000)], "q"])
    assert first_new(keys, ["p", *[f"h{i}" for i in range(1000)]]) == 1001
    assert sorted(read) == [1000, 1001]


def test_the_usual_call_reads_no_parts() -> None:
    """Without a call left open, the new items are not described (only keyed)."""

    class Parts(list[list[Part]]):
        def __getitem__(self, i: int) -> list[Part]:  # type: ignore[override]
            raise AssertionError(f"item {i} was described")

    assert reconcile(["p", "r2", "q"], Parts(), ["p", "r2"], []) == Reconciled((2,))
