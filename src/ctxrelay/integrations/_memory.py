"""How a run follows the framework's own memory and the user's processing of each
request (:class:`FrameworkMemory`, a part of :class:`~ctxrelay.integrations._run.Run`):
which of the open window's items the framework no longer holds, which it holds ahead of
them, and which a filter or history processor changed, so the request sent is the
window as the framework's memory and the user's processing left it."""

from __future__ import annotations

import operator
from collections.abc import Sequence

from ctxrelay.integrations._items import Codec, Item, _size, _View
from ctxrelay.store import Row


class FrameworkMemory:
    """The framework-memory half of a run: its own state, and the run's open window
    rows and stored keys (the run's lists, attached whenever it loads them)."""

    def __init__(self, codec: Codec) -> None:
        self.codec = codec
        self._rows: list[Row] = []
        self._keys: list[str] = []
        self.reset()

    def attach(self, rows: list[Row], keys: list[str]) -> None:
        """Follow the run's lists (after it loaded them from the store)."""
        self._rows = rows
        self._keys = keys

    def reset(self) -> None:
        self.view: _View | None = None
        self.view_items: Sequence[Item] = ()
        self._before = frozenset(self._keys)  # what the store held when the run began
        self._known: set[str] = set()
        self._known_of: tuple[int, int] = (0, 0)
        self._holds: set[str] | None = None  # the keys the framework held at its last call
        self._held_sig: tuple[int, str, str] | None = None
        self._head = 0  # how many items the framework's memory holds ahead of ctxrelay's
        self._dropped: set[str] = set()
        self._key_of: dict[int, tuple[Item, str]] = {}
        self._same: dict[int, tuple[Item, bool]] = {}

    def forget_except(self, items: Sequence[Item]) -> None:
        """Drop the per-object caches' entries of objects the framework no longer hands
        over: what they hold (and pin) is this call's items, never every object of every
        earlier call (the Agents SDK rebuilds its input at each call)."""
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
        keys = self._keys
        if self._known_of[0] != id(keys) or self._known_of[1] > len(keys):
            self._known = set(keys)
        else:
            self._known.update(keys[self._known_of[1] :])
        self._known_of = (id(keys), len(keys))
        return self._known

    def window_keys(self) -> list[str]:
        """The keys of the open window's framework items, in order."""
        return [str(k) for r in self._rows for k in r.metadata.get("keys") or ()]

    def look(self, items: Sequence[Item], processed: Sequence[Item] | None) -> _View | None:
        """What the framework's memory and the user's processing change in the open
        window's request this call (``None``: nothing), the rules of :meth:`prepare`:

        - items the framework held at an earlier call of this run and holds no longer (a
          history processor or a summarization rewrote its memory), or that come before
          the first item it holds at the run's start (it resumed from a memory cut short
          at its head), are not sent; they stay in the store, for ``session_history``;
        - items of that memory ctxrelay never stored, ahead of the first it did (the
          summary that replaced them), are sent in their place, while that item is one of
          the open window's;
        - ``processed is items``: an item the framework replaced by another object under
          the same key (a tool return a processor stubbed) is sent as it is now;
        - another ``processed``: its changes, removals and additions (in their place).

        ctxrelay's own rows (lead-in, advisories, triggering messages) are always sent."""
        known = self.stored_keys()
        n = len(items)
        sig = self._held_sig
        grew = (
            sig is not None
            and n >= sig[0]
            and self.key(items[0]) == sig[1]
            and self.key(items[sig[0] - 1]) == sig[2]
        )
        if grew and self._holds is not None and sig is not None:  # it only appended
            self._holds.update(self.key(i) for i in items[sig[0] :])
        else:
            keys = [self.key(i) for i in items]
            held = set(keys)
            first = next((j for j, k in enumerate(keys) if k in known), None)
            window = self.window_keys()
            self._head = 0
            if first is not None and keys[first] in window:
                self._head = first  # the items ahead of it are none of the store's
                if self._holds is None and keys[first] in self._before:
                    self._dropped |= set(window[: window.index(keys[first])])
            if self._holds is not None:
                self._dropped |= self._holds - held
            self._holds = held
        self._held_sig = (n, self.key(items[0]), self.key(items[-1])) if n else None
        held = self._holds or set()
        dropped = self._dropped - held
        anchors: dict[str, list[Item]] = {}
        if self._head and self._head < n:
            anchors[self.key(items[self._head])] = list(items[: self._head])
        if processed is None or processed is items:
            if not dropped and not anchors and processed is None:
                return None
            return _View(dropped, anchors, [], {}, replaced=processed is items)
        # The user's own processing of this request: what it removed, changed and added.
        sentkeys = [self.key(i) for i in processed]
        dropped |= held - set(sentkeys)
        inwindow = set(self.window_keys())
        changed = {k: f for k, f in zip(sentkeys, processed, strict=True) if k in inwindow}
        pending: list[Item] = []
        for k, f in zip(sentkeys, processed, strict=True):
            if k not in known and k not in held:
                pending.append(f)
            elif k in inwindow and k not in dropped and pending:
                anchors.setdefault(k, []).extend(pending)
                pending = []
        return _View(dropped, anchors, pending, changed, replaced=False)

    def follow(self, out: list[Item], size: int) -> tuple[list[Item], int]:
        """``out`` (the open window's request, of ``size`` bytes) with this call's
        :class:`_View` applied, and its size."""
        view = self.view
        assert view is not None
        changed = view.changed
        if view.replaced:  # the framework's objects that are not the ones ctxrelay sends
            items = self.view_items
            if len(items) != len(out) or not all(map(operator.is_, items, out)):
                sent = {id(i) for i in out}
                changed = {self.key(i): i for i in items if id(i) not in sent}
        if not view.dropped and not view.anchors and not view.trailing and not changed:
            return out, size
        result: list[Item] = []
        last = -1
        for item in out:
            k = self.key(item)
            if k in view.dropped:
                size -= _size(self.codec.dump(item)) + 1
                continue
            for extra in view.anchors.get(k, ()):
                result.append(extra)
                size += _size(self.codec.dump(extra)) + 1
            new = changed.get(k)
            if new is not None and new is not item and not self.equal(new, item):
                size += _size(self.codec.dump(new)) - _size(self.codec.dump(item))
                result.append(new)
            else:
                result.append(item)
            if self._holds is not None and k in self._holds:
                last = len(result)
        at = last if last >= 0 else len(result)
        result[at:at] = view.trailing  # after the last of the window's items it holds
        size += sum(_size(self.codec.dump(i)) + 1 for i in view.trailing)
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
