"""How a run follows the framework's own memory and the user's processing of each
request (:class:`FrameworkMemory`, a part of :class:`~ctxrelay.integrations._run.Run`).
What to send is decided by the pure functions :func:`~ctxrelay.integrations._reconcile.look`
and :func:`~ctxrelay.integrations._reconcile.compose` on keys; this class keys the
framework's objects (once per object), keeps what the run knows of the framework's memory
between calls (a :class:`~ctxrelay.integrations._reconcile.Held`), and turns the pieces
decided into the objects sent and their size."""

from __future__ import annotations

import operator
from collections.abc import Sequence

from ctxrelay.integrations._items import Codec, Item, _Lazy, _size
from ctxrelay.integrations._reconcile import Held, Piece, View, compose, look
from ctxrelay.store import Row


class FrameworkMemory:
    """The framework-memory half of a run: the keying caches, the :class:`Held` state,
    and the run's open window rows and stored keys (the run's lists, attached whenever
    it loads them)."""

    def __init__(self, codec: Codec) -> None:
        self.codec = codec
        self.attach([], [])
        self.reset()

    def attach(self, rows: list[Row], keys: list[str]) -> None:
        """Follow the run's lists (after it loaded them from the store); the run only
        appends to them until it loads them again."""
        self._rows = rows
        self._keys = keys
        # Their keys as a set and a list, kept as they grow (a dispatch reads the new
        # rows only, not the whole history).
        self._known: set[str] = set()
        self._known_n = 0
        self._window: list[str] = []
        self._window_n = 0

    def reset(self) -> None:
        self.view: View | None = None
        self.view_items: Sequence[Item] = ()
        self.processed: Sequence[Item] = ()
        self._before = frozenset(self._keys)  # what the store held when the run began
        self._held = Held()
        self._key_of: dict[int, tuple[Item, str]] = {}
        self._same: dict[int, tuple[Item, bool]] = {}

    def forget_except(self, items: Sequence[Item]) -> None:
        """Drop the per-object caches' entries of objects the framework no longer hands
        over: what they hold (and pin) is this call's items, never every object of every
        earlier call (the Agents SDK rebuilds its input at each call)."""
        if len(self._key_of) <= len(items) and len(self._same) <= len(items):
            return  # nothing to drop yet (the usual call: only new objects were keyed)
        live = {id(i) for i in items}
        for cache in (self._key_of, self._same):
            if len(cache) > len(live):
                for gone in [k for k in cache if k not in live]:
                    del cache[gone]

    def key(self, item: Item) -> str:
        """The codec's key, once per item object the framework holds (pydantic-ai and
        LangChain hand the same objects back at every call; entries of objects it no
        longer holds are dropped at each call)."""
        hit = self._key_of.get(id(item))
        if hit is not None and hit[0] is item:
            return hit[1]
        key = self.codec.key(item)
        self._key_of[id(item)] = (item, key)
        return key

    def stored_keys(self) -> set[str]:
        """The keys of every framework item the session stored (kept as rows are added)."""
        if self._known_n < len(self._keys):
            self._known.update(self._keys[self._known_n :])
            self._known_n = len(self._keys)
        return self._known

    def window_keys(self) -> list[str]:
        """The keys of the open window's framework items, in order (kept as rows are
        added)."""
        rows = self._rows
        for r in rows[self._window_n :]:
            self._window += [str(k) for k in r.metadata.get("keys") or ()]
        self._window_n = len(rows)
        return self._window

    def look(self, items: Sequence[Item], processed: Sequence[Item] | None) -> None:
        """Key this call's items and ``processed`` (the user's processing of the request)
        and keep :func:`~ctxrelay.integrations._reconcile.look`'s view of them for the
        renders of this call (:meth:`follow`)."""
        replaced = processed is items
        keys = None if processed is None or replaced else [self.key(i) for i in processed]
        self.view, self._held = look(
            _Lazy(items, self.key),
            keys,
            stored=self.stored_keys(),
            before=self._before,
            window=self.window_keys(),
            held=self._held,
            replaced=replaced,
        )
        self.view_items = items
        self.processed = processed if processed is not None else items

    def follow(self, out: list[Item], size: int) -> tuple[list[Item], int]:
        """``out`` (the open window's request, of ``size`` bytes) as
        :func:`~ctxrelay.integrations._reconcile.compose` makes it this call, and its
        size."""
        view = self.view
        assert view is not None
        changed: dict[str, Piece] | None = None
        if view.replaced:  # the framework's objects that are not the ones ctxrelay sends
            items = self.view_items
            changed = {}
            if len(items) != len(out) or not all(map(operator.is_, items, out)):
                sent = {id(i) for i in out}
                changed = {
                    self.key(i): Piece("items", j) for j, i in enumerate(items) if id(i) not in sent
                }
        pieces = compose(view, _Lazy(out, self.key), changed)
        if pieces is None:
            return out, size
        sources = {"items": self.view_items, "processed": self.processed}
        result: list[Item] = []
        kept: set[int] = set()
        for p in pieces:
            if p.source == "request":
                kept.add(p.at)
                result.append(out[p.at])
                continue
            new = sources[p.source][p.at]
            if p.instead < 0:
                size += _size(self.codec.dump(new)) + 1
            else:
                kept.add(p.instead)
                old = out[p.instead]
                if new is old or self.equal(new, old):
                    new = old
                else:
                    size += _size(self.codec.dump(new)) - _size(self.codec.dump(old))
            result.append(new)
        size -= sum(_size(self.codec.dump(o)) + 1 for i, o in enumerate(out) if i not in kept)
        return result, size

    def equal(self, new: Item, old: Item) -> bool:
        """Whether the framework's ``new`` object is ``old`` as JSON (asked once per
        object: a history resent after a restart is equal, a stubbed output is not)."""
        hit = self._same.get(id(new))
        if hit is not None and hit[0] is new:
            return hit[1]
        same = bool(self.codec.dump(new) == self.codec.dump(old))
        self._same[id(new)] = (new, same)
        return same
