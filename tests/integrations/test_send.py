"""What a call sends, on its own (:func:`look` and :func:`compose` after
:func:`reconcile`): the kill matrix's cases (``test_crashes.py``), issue 34's and the
framework's memory and the user's processing as data. Keys are letters as in
``test_reconcile.py``; ``lead`` and ``adv`` are ctxrelay's own rows of the request (a
lead-in, an advisory), ``x:c1`` the answer to ``c1`` as interrupted; ``t1*`` is the
framework's or the user's item of that key sent in place of the window's (when the two
differ as JSON: the run compares them)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import pytest

from ctxrelay.integrations._reconcile import (
    Call,
    Held,
    Piece,
    compose,
    look,
    reconcile,
)
from tests.integrations.test_reconcile import _PARTS

C1 = Call("c1", "slow")
_PARTS_ALL = {**_PARTS, "q2": _PARTS["q"], "r3": _PARTS["r2"], "note": _PARTS["q"]}


@dataclass(frozen=True)
class Case:
    """One call: the framework's ``items`` (and the user's ``processed`` request: a list,
    ``"same"`` for the framework's own list with the objects of ``changed`` replaced in
    place), what the session ``stored`` and the open ``window`` holds (its framework
    items' keys) and the rows it renders (``request``, the window's items among
    ctxrelay's own); ``earlier``: the framework's items at this run's earlier calls."""

    id: str
    items: list[str]
    stored: list[str]
    sent: list[str]
    recorded: list[str] = field(default_factory=list)
    window: list[str] | None = None  # default: stored
    request: list[str] | None = None  # default: window
    pending: list[Call] = field(default_factory=list)
    processed: list[str] | str | None = None
    changed: list[str] = field(default_factory=list)
    earlier: list[list[str]] = field(default_factory=list)


def _call(case: Case) -> tuple[list[str], list[str]]:
    """What the run records and sends for ``case``, as ``Run.prepare`` does: reconcile,
    append what it records to the store and the window, look, then compose."""
    stored = list(case.stored)
    window = list(case.stored if case.window is None else case.window)
    request = list(window if case.request is None else case.request)
    before = frozenset(stored)
    held = Held()
    for items in case.earlier:  # the run's earlier calls (nothing new recorded)
        _, held = look(items, None, stored=set(stored), before=before, window=window, held=held)
    todo = reconcile(case.items, [_PARTS_ALL[k] for k in case.items], stored, case.pending)
    recorded = [f"x:{c.call_id}" for c in todo.interrupted] + [case.items[i] for i in todo.record]
    stored += recorded
    window += recorded
    request += recorded
    same = case.processed == "same"
    processed = None if same or case.processed is None else list(case.processed)
    view, _ = look(
        case.items,
        processed,
        stored=set(stored),
        before=before,
        window=window,
        held=held,
        replaced=same,
    )
    changed = None
    if same:  # the framework's objects not among those rendered (by identity)
        changed = {k: Piece("items", case.items.index(k)) for k in case.changed}
    pieces = None if view is None else compose(view, request, changed)
    return recorded, _names(pieces, request, case.items, processed)


def _names(
    pieces: Sequence[Piece] | None,
    request: list[str],
    items: list[str],
    processed: list[str] | None,
) -> list[str]:
    if pieces is None:
        return request
    source = {"request": request, "items": items, "processed": processed or []}
    return [source[p.source][p.at] + ("*" if p.instead >= 0 else "") for p in pieces]


CASES = [
    # The usual call: the framework's memory grew by the new prompt; all of it is sent.
    Case("grown", ["p", "r2", "q"], ["p", "r2"], ["p", "r2", "q"], ["q"]),
    # A run given only its new input: the window is sent, not the framework's one item.
    Case("new-input-only", ["q"], ["p", "r2"], ["p", "r2", "q"], ["q"]),
    # Issue 34: the first prompt asked again without framework memory: a new prompt,
    # recorded and sent last (the request never ends with the model's own reply).
    Case("repeated-first-prompt", ["p"], ["p", "r2"], ["p", "r2", "p"], ["p"]),
    Case("repeated-with-memory", ["p", "r2", "p"], ["p", "r2"], ["p", "r2", "p"], ["p"]),
    # The framework's memory resent whole (the Agents SDK's session), ctxrelay's own rows
    # in their places: the window as the store has it.
    Case(
        "memory-resent-whole",
        ["p", "r2", "q", "r3", "q2"],
        ["p", "r2", "q", "r3"],
        ["lead", "p", "adv", "r2", "q", "r3", "q2"],
        ["q2"],
        request=["lead", "p", "adv", "r2", "q", "r3"],
    ),
    # Kill matrix: mid-first-request (the lost request's prompt, retried: sent once).
    Case("mid-first-request", ["p"], ["p"], ["adv", "p"], request=["adv", "p"]),
    # Kill matrix: mid-tool (the call answered as interrupted, before the new prompt).
    Case(
        "mid-tool",
        ["p", "r1", "continue"],
        ["p", "r1"],
        ["p", "r1", "x:c1", "continue"],
        ["x:c1", "continue"],
        pending=[C1],
    ),
    # Kill matrix: after-result (the framework kept the result: it answers the call).
    Case(
        "after-result",
        ["p", "r1", "t1", "continue"],
        ["p", "r1"],
        ["p", "r1", "t1", "continue"],
        ["t1", "continue"],
        pending=[C1],
    ),
    # Kill matrix: mid-request (the result stored, its request lost).
    Case(
        "mid-request",
        ["p", "r1", "t1", "continue"],
        ["p", "r1", "t1"],
        ["p", "r1", "t1", "adv", "continue"],
        ["continue"],
        request=["p", "r1", "t1", "adv"],
    ),
    # A dangling tool call and nothing else new: it is answered before the request.
    Case("dangling-call", ["p", "r1"], ["p", "r1"], ["p", "r1", "x:c1"], ["x:c1"], pending=[C1]),
    # Kill matrix: mid-seal / after-seal, and any call after a handoff: the fresh window
    # holds none of the framework's old items, which are not sent (the framework resends
    # its whole memory).
    Case(
        "handoff",
        ["p", "r1", "t1", "continue"],
        ["p", "r1", "t1", "continue"],
        ["lead", "trigger"],
        window=[],
        request=["lead", "trigger"],
    ),
    Case(
        "after-handoff",
        ["p", "r1", "t1", "continue", "r3", "q"],
        ["p", "r1", "t1", "continue", "r3"],
        ["lead", "trigger", "r3", "q"],
        ["q"],
        window=["r3"],
        request=["lead", "trigger", "r3"],
    ),
    # ... with a processor that hands the same list back (pydantic-ai, LangChain) or
    # another list (the Agents SDK's filter): the old items stay out.
    Case(
        "handoff-processed-same",
        ["p", "r1", "t1", "continue"],
        ["p", "r1", "t1", "continue"],
        ["lead", "trigger"],
        window=[],
        request=["lead", "trigger"],
        processed="same",
        changed=["p", "r1", "t1", "continue"],
    ),
    Case(
        "handoff-filtered",
        ["p", "r1", "t1", "continue"],
        ["p", "r1", "t1", "continue"],
        ["lead", "trigger"],
        window=[],
        request=["lead", "trigger"],
        processed=["p", "r1", "t1", "continue"],
    ),
    # The framework trimmed its memory during the run (a history processor that keeps
    # the last turns): what it no longer holds is not sent; the store keeps it.
    Case(
        "memory-trimmed",
        ["q", "r3", "q2"],
        ["p", "r2", "q", "r3"],
        ["q", "r3", "q2"],
        ["q2"],
        earlier=[["p", "r2", "q"]],
    ),
    # ... and a memory that only grew since the earlier call keeps everything.
    Case(
        "memory-grew",
        ["p", "r2", "q", "r3", "q2"],
        ["p", "r2", "q", "r3"],
        ["p", "r2", "q", "r3", "q2"],
        ["q2"],
        earlier=[["p", "r2", "q"]],
    ),
    # A memory resumed cut short at its head (a summary in place of the oldest items):
    # the summary is sent in their place, before the first item the store holds.
    Case(
        "summarized-head",
        ["summary", "t1", "q"],
        ["p", "r1", "t1"],
        ["summary", "t1", "q"],
        ["q"],
    ),
    # Processed items that differ from the raw ones (pydantic-ai history processors): a
    # tool return stubbed in place is sent as it is now ...
    Case(
        "processor-stubbed-in-place",
        ["p", "r1", "t1", "q"],
        ["p", "r1", "t1"],
        ["p", "r1", "t1*", "q"],
        ["q"],
        processed="same",
        changed=["t1"],
    ),
    # ... the same objects: nothing changes.
    Case(
        "processor-unchanged",
        ["p", "r1", "t1", "q"],
        ["p", "r1", "t1"],
        ["adv", "p", "r1", "t1", "q"],
        ["q"],
        request=["adv", "p", "r1", "t1"],
        processed="same",
    ),
    # Another list (a filter): an item it changed is sent changed, one it removed is not
    # sent, one it added is sent in its place or after the last item it holds.
    Case(
        "filter-changed",
        ["p", "r1", "t1", "q"],
        ["p", "r1", "t1"],
        ["p*", "r1*", "t1*", "q*"],
        ["q"],
        processed=["p", "r1", "t1", "q"],
    ),
    Case(
        "filter-removed",
        ["p", "r2", "q"],
        ["p", "r2"],
        ["adv", "q*"],
        ["q"],
        request=["adv", "p", "r2"],
        processed=["q"],
    ),
    Case(
        "filter-added-before",
        ["p", "r2", "q"],
        ["p", "r2"],
        ["p*", "r2*", "note", "q*"],
        ["q"],
        processed=["p", "r2", "note", "q"],
    ),
    Case(
        "filter-added-after",
        ["p", "r2", "q"],
        ["p", "r2"],
        ["p*", "r2*", "adv", "q*", "note"],
        ["q"],
        request=["p", "r2", "adv"],
        processed=["p", "r2", "q", "note"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_send(case: Case) -> None:
    recorded, sent = _call(case)
    assert (recorded, sent) == (case.recorded, case.sent)


def test_a_memory_that_only_grew_is_read_at_its_new_items() -> None:
    """A framework that resends a long memory at each call is keyed at its new items
    only (and the first and the last it held), once the run knows what it held."""
    history = ["p", *[f"h{i}" for i in range(1000)]]
    read: list[int] = []

    class Keys(list[str]):
        def __getitem__(self, i: int) -> str:  # type: ignore[override]
            read.append(i)
            return str(list.__getitem__(self, i))

        def __iter__(self) -> Iterator[str]:
            raise AssertionError("read whole")

    stored = set(history)
    _, held = look(history, None, stored=stored, before=stored, window=history, held=Held())
    view, after = look(
        Keys([*history, "q"]), None, stored=stored, before=stored, window=history, held=held
    )
    assert view is None
    assert after.keys == frozenset([*history, "q"])
    assert set(read) <= {0, 1000, 1001, -1}  # -1: the last, 1001
