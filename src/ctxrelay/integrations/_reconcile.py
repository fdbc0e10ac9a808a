"""The reconciliation of a framework's items with what the session stored, as a pure
function (:func:`reconcile`): the framework's items (their keys and what each carries),
the keys the session stored and the tool calls its open window left unanswered in, what
to record out (which items, and which calls to answer as interrupted). No I/O: the run
(``_run.py``) reads the store, builds the rows and appends them.

The rules, each pinned by ``tests/integrations/test_reconcile.py`` as data:

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

from collections.abc import Sequence
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
