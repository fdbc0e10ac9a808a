"""The reconciliation of a framework's items with what the session stored, as pure
functions on keys. What to record (:func:`reconcile`): the framework's items (their keys
and what each carries), the keys the session stored and the tool calls its open window
left unanswered in, what to record out (which items, and which calls to answer as
interrupted). What to send (:func:`look`, then :func:`compose` for each render of the
window): the framework's items' keys, the user's processed items' keys, the stored keys
and the window's, what the run knew of the framework's memory at its earlier calls in,
the pieces of the request out (see :func:`look` for its rules; data cases in
``tests/integrations/test_send.py``). No I/O: the run (``_run.py``) reads the store,
builds the rows and appends them; ``_memory.py`` keys the objects and sends the pieces.

The recording rules, each pinned by ``tests/integrations/test_reconcile.py`` as data:

- the items after the last stored item (its last occurrence) are new: the usual case;
- when it is absent but the items open with the session's first stored item, the
  framework resent its own memory (a session, ``message_history``, a checkpoint) that lost
  the tail ctxrelay stored (a crash): the items after the last one that matches a stored
  item, in order, are new;
- otherwise all of them are new (a run given only new input);
- a prompt whose request was lost (the last stored item, with no answer after it) that
  the next run sends again matches that item: it is the same prompt, retried, recorded
  once; any other item is new when the framework cannot have resent it: a call always
  ends with something new (a prompt, a tool's result), so a last item equal to an earlier
  stored one (the first prompt asked again) is a new prompt;
- a tool call of the window's last response that neither the store nor the new items
  answer is answered "interrupted" before them, only when a model call follows (a
  process died while it ran, and a provider rejects a request with a call left
  unanswered); when a run ends (``ending``), only the tool results that answer those
  calls are recorded, as they are, and nothing is answered for the framework.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import NamedTuple


class Part(NamedTuple):
    """One part of a framework item: the kind of row it is stored as (``user``,
    ``assistant``, ``tool_call``, ``tool_result``, ...) and, for a tool call or result,
    its call id."""

    kind: str
    call_id: str | None = None


class Call(NamedTuple):
    """A tool call of the open window's last response: its id and tool name."""

    call_id: str
    name: str


@dataclass(frozen=True, slots=True)
class Reconciled:
    """What to record of one call's items: ``interrupted`` (the calls to answer as
    interrupted, first) then the items at ``record`` (indices into the items, in order)."""

    record: tuple[int, ...]
    interrupted: tuple[Call, ...] = ()


def first_new(keys: Sequence[str], stored: Sequence[str]) -> int:
    """The index of the first of ``keys`` (the framework's items) not yet stored
    (``len(keys)``: none), by the rules above. ``keys`` is read from its end and only as
    far as needed (the new items are few): a lazy sequence keys only those."""
    if not stored or not keys:
        return 0
    last = stored[-1]
    for j in range(len(keys) - 1, -1, -1):
        if keys[j] == last:
            return j + 1
    if keys[0] != stored[0]:
        return 0
    at, known = 0, 0
    for j in range(len(keys)):
        try:
            at = stored.index(keys[j], at) + 1
        except ValueError:
            continue  # the framework's own item, not ctxrelay's to record
        known = j + 1
    return min(known, len(keys) - 1)


def reconcile(
    keys: Sequence[str],
    parts: Sequence[Sequence[Part]],
    stored: Sequence[str],
    pending: Sequence[Call],
    *,
    ending: bool = False,
) -> Reconciled:
    """What to record of the framework's items (``keys[i]`` and ``parts[i]`` describe
    item ``i``; ``parts`` is read only for the new items), given the keys the session
    ``stored`` (in order, all windows) and the ``pending`` calls of the open window's last
    response that no stored row answers. ``ending``: the run ended, no model call follows."""
    start = first_new(keys, stored)
    new = range(start, len(keys))
    if ending:
        open_ids = {c.call_id for c in pending}
        record = tuple(
            i
            for i in new
            if parts[i] and all(p.kind == "tool_result" and p.call_id in open_ids for p in parts[i])
        )
        return Reconciled(record)
    if not pending:  # the usual call: no item is read for its parts
        return Reconciled(tuple(new))
    answered = {p.call_id for i in new for p in parts[i] if p.kind == "tool_result"}
    interrupted = tuple(c for c in pending if c.call_id not in answered)
    return Reconciled(tuple(new), interrupted)


# -- what to send ---------------------------------------------------------------------


class Piece(NamedTuple):
    """One item of the request sent: the open window's rendered request's item ``at``
    (``source`` ``request``), or the framework's item ``at`` (``items``) or the user's
    processed item ``at`` (``processed``); ``instead``: the index of the window's item it
    replaces (``-1``: none), sent only when the two differ as JSON."""

    source: str
    at: int
    instead: int = -1


@dataclass(frozen=True, slots=True)
class Held:
    """What a run knows of the framework's memory from its earlier calls: the keys it
    held at its last call (``None``: no call yet), the window's items it no longer holds,
    how many items it holds ahead of the store's (``head``), and the shape of its last
    items (their number, first and last key: a memory that only grew is not re-read)."""

    keys: frozenset[str] | None = None
    dropped: frozenset[str] = frozenset()
    head: int = 0
    shape: tuple[int, str, str] | None = None


@dataclass(frozen=True, slots=True)
class View:
    """What one call's framework memory and user processing change in the open window's
    request: keys not to send, items to send before a key's item, items to send after
    the window's last item the framework holds, items to send instead of the window's
    item of their key; ``replaced``: the framework's current objects replace the
    window's of the same key (a processor that changed them in place); ``held``: the
    keys the framework holds."""

    dropped: frozenset[str]
    anchors: Mapping[str, tuple[Piece, ...]]
    trailing: tuple[Piece, ...]
    changed: Mapping[str, Piece]
    replaced: bool
    held: frozenset[str]


def look(
    items: Sequence[str],
    processed: Sequence[str] | None,
    *,
    stored: AbstractSet[str],
    before: AbstractSet[str],
    window: Sequence[str],
    held: Held,
    replaced: bool = False,
) -> tuple[View | None, Held]:
    """What the framework's memory and the user's processing change in the open
    window's request this call (``None``: nothing), and what the run knows after it.

    ``items``: the keys of the framework's items (read only where needed when its memory
    only grew); ``processed``: the keys of the request after the user's processing
    (``None``: none, or ``replaced``: the same list, some objects changed); ``stored``:
    every key the session stored; ``before``: those stored when the run began;
    ``window``: the open window's framework items' keys, in order. The rules:

    - items the framework held at an earlier call of this run and holds no longer (a
      history processor or a summarization rewrote its memory), or that come before the
      first item it holds at the run's start (it resumed from a memory cut short at its
      head), are not sent; they stay in the store, for ``session_history``;
    - items of that memory ctxrelay never stored, ahead of the first it did (the summary
      that replaced them), are sent in their place, while that item is one of the open
      window's;
    - ``replaced``: an item the framework replaced by another object under the same key
      (a tool return a processor stubbed) is sent as it is now;
    - another ``processed``: its changes, removals and additions (in their place).

    ctxrelay's own rows (lead-in, advisories, triggering messages) are always sent."""
    n = len(items)
    shape = held.shape
    if (
        held.keys is not None
        and shape is not None
        and n >= shape[0]
        and items[0] == shape[1]
        and items[shape[0] - 1] == shape[2]
    ):  # it only appended: nothing it held went, the head is the same
        now = held.keys.union(items[j] for j in range(shape[0], n))
        dropped, head = held.dropped, held.head
    else:
        keys = list(items)
        now = frozenset(keys)
        first = next((j for j, k in enumerate(keys) if k in stored), None)
        dropped, head = held.dropped, 0
        if first is not None and keys[first] in window:
            head = first  # the items ahead of it are none of the store's
            if held.keys is None and keys[first] in before:
                dropped |= frozenset(window[: list(window).index(keys[first])])
        if held.keys is not None:
            dropped |= held.keys - now
    after = Held(now, dropped, head, (n, items[0], items[-1]) if n else None)
    gone = dropped - now
    anchors: dict[str, tuple[Piece, ...]] = {}
    if head and head < n:
        anchors[items[head]] = tuple(Piece("items", j) for j in range(head))
    if processed is None or replaced:
        if not gone and not anchors and not replaced:
            return None, after
        return View(gone, anchors, (), {}, replaced, now), after
    gone |= now - frozenset(processed)
    inwindow = frozenset(window)
    changed = {k: Piece("processed", j) for j, k in enumerate(processed) if k in inwindow}
    pending: list[Piece] = []
    for j, k in enumerate(processed):
        if k not in stored and k not in now:
            pending.append(Piece("processed", j))
        elif k in inwindow and k not in gone and pending:
            anchors[k] = (*anchors.get(k, ()), *pending)
            pending = []
    return View(gone, anchors, tuple(pending), changed, False, now), after


def compose(
    view: View, request: Sequence[str], changed: Mapping[str, Piece] | None = None
) -> tuple[Piece, ...] | None:
    """The request to send: the open window's rendered request (``request``: its items'
    keys) with ``view`` applied (``None``: as rendered). ``changed`` stands for the
    view's when ``replaced`` (the framework's items that are not the objects rendered)."""
    swap = view.changed if changed is None else changed
    if not view.dropped and not view.anchors and not view.trailing and not swap:
        return None
    out: list[Piece] = []
    last = -1
    for i, k in enumerate(request):
        if k in view.dropped:
            continue
        out += view.anchors.get(k, ())
        new = swap.get(k)
        out.append(Piece(new.source, new.at, i) if new is not None else Piece("request", i))
        if k in view.held:
            last = len(out)
    at = last if last >= 0 else len(out)
    out[at:at] = view.trailing  # after the last of the window's items it holds
    return tuple(out)
