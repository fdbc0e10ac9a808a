"""One run of a framework's agent on a relay's session (:class:`Run`): the lease it
holds, the window it records into and the request it sends (see ``_relay.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ctxrelay.errors import (
    ConversationError,
    DispatchBlockedError,
    RequestTooLargeError,
    StoreError,
)
from ctxrelay.integrations._items import (
    _INSTRUCTIONS_LOST,
    _SEALING_KEY,
    _TEXT_KINDS,
    NEW_CONTEXT,
    Conversation,
    Item,
    ItemRow,
    Sealing,
    SentRequest,
    _last_response_at,
    _Lazy,
    _list_size,
    _size,
)
from ctxrelay.integrations._memory import FrameworkMemory
from ctxrelay.integrations._reconcile import Call, Part, Reconciled, reconcile
from ctxrelay.integrations._support import warn_once
from ctxrelay.runtime._tools import interrupted_text
from ctxrelay.runtime.dispatch import DispatchTarget, dispatch_step
from ctxrelay.runtime.estimate import BytesPerTokenEstimator
from ctxrelay.runtime.events import (
    DispatchEvent,
    EndEvent,
    Event,
    ResponseEvent,
    RolloverEvent,
    StartEvent,
    ToolEvent,
)
from ctxrelay.runtime.plan import (
    LastResponse,
    WindowState,
    estimate_request,
    guard_request,
)
from ctxrelay.runtime.tools.context import sealing_text
from ctxrelay.runtime.windows import lead_in_text, seal_window, window_opening
from ctxrelay.store import (
    Lease,
    NewRow,
    Row,
    SealReason,
    WindowInfo,
)
from ctxrelay.store._lease import Holding, hold_lease

if TYPE_CHECKING:
    from pathlib import Path

    from ctxrelay.budget import Budget, Capability
    from ctxrelay.integrations._items import Codec
    from ctxrelay.integrations._relay import Relay
    from ctxrelay.runtime.events import EventSink
    from ctxrelay.store import Store


def _current_task() -> asyncio.Task[Any] | None:
    """The asyncio task running this code (``None``: no running loop)."""
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None


def _call_ended(ref: weakref.ref[Run], task: asyncio.Task[Any]) -> None:
    """A task that made a run's model call ended: if the answer never came, the run is
    over (a model error the framework raised, a cancelled stream) and gives the lease
    up."""
    run = ref()
    if run is not None and run._calling is task:
        run.release()


class Run:
    """One run of a framework's agent on a relay's session: it holds the session's lease
    (renewed while the run lasts) and every piece of state a run needs, re-derived from
    the store when it begins, so two runs never share any. A framework's pre-call seam
    calls :meth:`prepare`, its post-call seam :meth:`record_response`, and its end
    :meth:`release`."""

    def __init__(self, relay: Relay, holding: Holding) -> None:
        self.relay = relay
        self.memory = FrameworkMemory(relay.codec)
        self._holding = holding
        # The tasks the framework called this run's seams from, and the one whose model
        # call is under way (prepared, not yet answered): what tells a run that ended
        # without the framework saying so (see finished()).
        self._tasks: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()
        self._calling: asyncio.Task[Any] | None = None
        self.fixed_bytes = 0
        """Bytes the framework sends with every request besides its items (instructions,
        tool schemas); set by the adapter at each call."""
        self._begin()

    def _begin(self) -> None:
        self._estimator = BytesPerTokenEstimator()
        self._load()
        self._pending_bytes: int | None = None
        every = self.store.rows(self.id)
        self._resumed = bool(every)
        self._turns = sum(1 for r in every if r.kind == "assistant")
        self._started = False
        self._running = False  # this run set the session's status to running
        self.memory.reset()

    # The relay's configuration, read through (a run keeps none of it twice).

    @property
    def store(self) -> Store:
        return self.relay.store

    @property
    def budget(self) -> Budget:
        return self.relay.budget

    @property
    def codec(self) -> Codec:
        return self.relay.codec

    @property
    def id(self) -> str:
        return self.relay.id

    @property
    def framework(self) -> str:
        return self.relay.framework

    @property
    def workspace(self) -> Path:
        return self.relay.workspace

    @property
    def notes_file(self) -> str:
        return self.relay.notes_file

    @property
    def model(self) -> str:
        return self.relay.model

    @property
    def on_event(self) -> EventSink | None:
        return self.relay.on_event

    @property
    def capability(self) -> Capability:
        return self.relay.capability

    @property
    def lease(self) -> Lease:
        """The session's lease this run holds."""
        return self._holding.lease

    @property
    def released(self) -> bool:
        return self._holding.released

    def release(self) -> None:
        """End the run's hold on the session (its end; later calls do nothing). A run
        that began sending and ends without :meth:`end` (an error, a cancel, a limit)
        leaves the session ``paused`` (``pause_reason`` ``ended``), not ``running``."""
        self._calling = None
        if self._running and not self._holding.released:
            self._running = False
            with contextlib.suppress(StoreError):  # the lease goes even so
                self.store.update_session(
                    self.id, status="paused", metadata={"pause_reason": "ended"}
                )
        self._holding.release()

    def finished(self, task: asyncio.Task[Any] | None) -> bool:
        """Whether this run is over for certain though its framework did not say so,
        seen from ``task`` that begins another run of the relay: ``task`` itself called
        this run's seams (a task runs one thing at a time, so it left this run, by an
        exception or a framework's limit), or the task that made this run's model call
        ended before the answer came (the call failed or was cancelled)."""
        if task is not None and task in self._tasks:
            return True
        calling = self._calling
        return calling is not None and calling.done()

    def _seam(self, *, calling: bool | None = None) -> None:
        """Note the task a seam of the framework runs in; ``calling``: a model call
        starts (prepared) or ends (answered)."""
        task = _current_task()
        if task is None:
            return
        if calling is True:
            self._calling = task
            if task not in self._tasks:  # one callback a task, which keeps no run alive
                task.add_done_callback(functools.partial(_call_ended, weakref.ref(self)))
        elif calling is False:
            self._calling = None
        self._tasks.add(task)

    def _held(self) -> None:
        """Raise if the lease was lost; take it again (and re-derive the state) when the
        framework calls on after the run was released."""
        if self._holding.released and self._holding.lost is None:
            self._holding = hold_lease(
                self.store, self.id, ttl=self.relay.lease_ttl, label=self.framework
            )
            weakref.finalize(self, self._holding.release)
            self.relay._runs.add(self)
            self._begin()
        self._holding.check()

    def _load(self) -> None:
        """Re-derive the open window, its rows and the estimator from the store."""
        self.window: WindowInfo = self.store.current_window(self.id)
        self._rows: list[Row] = self.store.rows(self.id, window_id=self.window.id)
        self._cache: dict[int, tuple[list[Item], int]] = {}
        # Items this process recorded, by key, with their JSON's size: sent as the
        # framework gave them rather than rebuilt from the store, and measured once.
        self._fresh: dict[str, tuple[Item, int]] = {}
        self._prefix: tuple[int, list[Item], int] | None = None
        self._claims: set[str] = set()
        self._max_context = 0
        self._track(self._rows)
        # The keys of every framework item the session stored, in order (all windows:
        # a framework that keeps its own memory resends the sealed windows' items too).
        self._keys: list[str] = []
        last_measured: Row | None = None
        for row in self.store.rows(self.id):
            keys = row.metadata.get("keys")
            if isinstance(keys, list):
                self._keys += [str(k) for k in keys]
            if row.kind == "assistant" and "request_bytes" in row.metadata:
                last_measured = row
        if last_measured is not None:
            meta = last_measured.metadata
            self._estimator.observe(int(meta["request_bytes"]), int(meta["context_tokens"]))
        self.memory.attach(self._rows, self._keys)

    def _check_memory(self, items: Sequence[Item]) -> None:
        """Raise :class:`ConversationError` when the run's first input carries a
        framework's memory of another conversation: earlier replies or tool results, none
        of which this session stored, while it stored others (a session or a message
        history of another user handed to this conversation's relay)."""
        if not self._keys or len(items) < 2:
            return
        earlier = items[:-1]
        replies = [
            i
            for i in earlier
            if any(d.kind in ("assistant", "tool_result") for d in self.codec.describe(i)[:1])
        ]
        known = self.memory.stored_keys()
        if replies and not any(self.memory.key(i) in known for i in earlier):
            raise ConversationError(
                self.id,
                self.relay.conversation,
                f"the memory of another conversation ({len(earlier)} earlier messages, none "
                "of them this session's)",
                self.framework,
            )

    def _check_conversation(self, conversation: Conversation) -> None:
        """Bind the relay to the conversation the framework's memory carries, or raise
        :class:`ConversationError` for a run the framework began as a new conversation
        (none of its memory given) while the relay holds one its memory carried: to the
        framework that is another conversation, though ctxrelay could send it the window."""
        if conversation.carried:
            self.relay.bind(conversation.key)
            return
        bound = self.relay.bound()
        if bound is not None and bound != conversation.key and self._keys:
            raise ConversationError(
                self.id,
                bound,
                f"a new conversation ({conversation.key}: {conversation.fresh})",
                self.framework,
            )

    def _emit(self, event: Event) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def start(self) -> None:
        """Emit the start event (hosts that show a timeline call it once per run)."""
        self._started = True
        self._running = True
        self.store.update_session(self.id, status="running", metadata={"pause_reason": None})
        model = self.model or self.framework
        self._emit(StartEvent.under(self.id, self.window.index, self._resumed, self.budget, model))

    def end(self, status: str = "done", reason: str | None = None) -> None:
        """Record the run's end in the session, emit the end event and release the lease."""
        self.store.update_session(self.id, status=status, metadata={"pause_reason": reason})
        self._emit(EndEvent(self.id, status, reason, self.window.index, self._turns, 0.0))
        self._running = False
        self.release()

    def complete(self) -> None:
        """The framework showed the run's end (its final output): the session is
        ``done`` until its next run, and the lease goes."""
        if self._running and not self._holding.released:
            self._running = False
            self.store.update_session(self.id, status="done", metadata={"pause_reason": None})
        self.release()

    # -- recording ---------------------------------------------------------------------

    def _append(self, rows: Sequence[NewRow]) -> list[Row]:
        added = self.store.append(self.id, self.window.id, rows)
        self._rows.extend(added)
        self._track(added)
        for row in added:
            keys = row.metadata.get("keys")
            if isinstance(keys, list):
                self._keys += [str(k) for k in keys]
        return added

    def _calls(self) -> dict[str, str]:
        """The tool calls of the window's last response, by id (what results answer)."""
        calls: dict[str, str] = {}
        for r in reversed(self._rows):
            if r.kind == "assistant":
                break
            if r.kind == "tool_call" and "id" in r.metadata:
                calls[str(r.metadata["id"])] = str(r.metadata.get("name", ""))
        return calls

    def _reconcile(self, items: Sequence[Item], *, ending: bool = False) -> Reconciled:
        """:func:`reconcile` of ``items`` with the store, the items keyed and described
        only as far as it reads them."""
        keys = _Lazy(items, self.memory.key)
        parts = _Lazy(items, self._parts)
        return reconcile(keys, parts, self._keys, self._pending(), ending=ending)

    def _parts(self, item: Item) -> list[Part]:
        return [Part(d.kind, d.call_id) for d in self.codec.describe(item)]

    def _pending(self) -> list[Call]:
        """The tool calls of the window's last response that no row after it answers."""
        after = self._rows[_last_response_at(self._rows) + 1 :]
        done = {str(r.metadata.get("tool_call_id")) for r in after if r.kind == "tool_result"}
        return [
            Call(str(r.metadata.get("id")), str(r.metadata.get("name", "")))
            for r in after
            if r.kind == "tool_call" and str(r.metadata.get("id")) not in done
        ]

    def _part_row(self, d: ItemRow, meta: dict[str, Any], calls: Mapping[str, str]) -> NewRow:
        text = d.text
        if d.system:
            meta["system"] = True
        if d.kind == "tool_call":
            args = dict(d.arguments or {})
            meta.update(id=d.call_id, name=d.name, input=args)
            text = json.dumps(args, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        elif d.kind == "tool_result":
            name = d.name or calls.get(d.call_id or "", "")
            meta.update(tool_call_id=d.call_id, name=name, is_error=False)
            if name == NEW_CONTEXT and self._sealing(name, d.call_id):
                meta["new_context"] = True
        return NewRow(d.kind, text, meta)

    def _sealing(self, name: str, call_id: str | None) -> bool:
        """Whether the result of the call ``call_id`` to ``name`` is the outcome of a
        ``new_context`` that succeeded in the open window (read from the store: a
        process that resumes after the tool ran still knows it)."""
        meta = self.store.get_session(self.id).metadata
        outcome = Sealing.load(meta.get(_SEALING_KEY))
        return outcome is not None and outcome.seals(self.window.index, name, call_id)

    def _remember(self, item: Item) -> tuple[str, Any, int]:
        """The key, JSON and JSON size of an item this process records (kept as fresh)."""
        key = self.memory.key(item)
        raw = self.codec.dump(item)
        size = _size(raw)
        self._fresh[key] = (item, size)
        return key, raw, size

    def _rows_for(
        self, item: Item, calls: Mapping[str, str], described: Sequence[ItemRow] | None = None
    ) -> list[NewRow]:
        """The rows of one item (``described``: its codec's description, when already
        made): the first carries the item (and is what is sent); the others (the further
        parts of a message that holds several) are its parts, for ``session_history`` and
        ``sessions show``, and send nothing themselves."""
        key, raw, _ = self._remember(item)
        rows: list[NewRow] = []
        for i, d in enumerate(self.codec.describe(item) if described is None else described):
            meta: dict[str, Any] = {"items": [raw], "keys": [key]} if i == 0 else {"part_of": key}
            rows.append(self._part_row(d, meta, calls))
        return rows

    def _interrupted(self, call: Call) -> NewRow:
        """The answer to a tool call a dead process left without its result: the model is
        told, as by the runtime; a ``new_context`` whose outcome was kept (it ran and
        succeeded, the process died before its result was stored) is answered with that
        outcome, and seals the window as if its result had been stored."""
        sealed = call.name == NEW_CONTEXT and self._sealing(call.name, call.call_id)
        text = sealing_text(self.window.index) if sealed else interrupted_text(call.name)
        item = self.codec.tool_output(call.call_id, call.name, text)
        meta: dict[str, Any] = {
            "items": [self.codec.dump(item)],
            "keys": [self.codec.key(item)],
            "tool_call_id": call.call_id,
            "name": call.name,
            "is_error": not sealed,
        }
        if sealed:
            meta["new_context"] = True
        return NewRow("tool_result", text, meta)

    def _record_input(self, items: Sequence[Item]) -> None:
        todo = self._reconcile(items)
        calls = self._calls()
        # A call left without its result is answered even when nothing else is new:
        # a provider rejects every request that carries an unanswered call.
        rows = [self._interrupted(c) for c in todo.interrupted]
        rows += [row for i in todo.record for row in self._rows_for(items[i], calls)]
        if not rows:
            return
        added = self._append(rows)
        for row in added:
            if row.kind == "tool_result":
                meta = row.metadata
                first = (row.text or "").splitlines()[0] if row.text else ""
                self._emit(
                    ToolEvent(
                        self.window.index,
                        str(meta.get("name", "")),
                        str(meta.get("tool_call_id", "")),
                        bool(meta.get("is_error")),
                        first[:200],
                        {k: v for k, v in meta.items() if k not in ("items", "keys")},
                    )
                )

    def record_results(self, items: Sequence[Item]) -> None:
        """Store the tool results among ``items`` (the framework's messages when its run
        ended) that answer the last response's calls and were never sent: the run
        stopped before its next model call (a usage limit), and the results are stored
        as they are, not answered later as interrupted."""
        if self._holding.released:
            return
        self._holding.check()
        calls = self._calls()
        todo = self._reconcile(items, ending=True)
        if todo.record:
            self._append([row for i in todo.record for row in self._rows_for(items[i], calls)])

    def record_response(
        self,
        items: Sequence[Item],
        *,
        context_tokens: int,
        output_tokens: int,
        usage: Mapping[str, int] | None = None,
    ) -> None:
        """Store the model's reply (``items``: its messages and tool calls, in order) with
        what the provider counted: ``context_tokens`` for the request (input plus cache
        writes and reads) and ``output_tokens`` for the reply."""
        self._holding.check()
        self._seam(calling=False)
        texts: list[str] = []
        # The items whose first part is the reply's text: their keys, JSON and sizes.
        keys: list[str] = []
        dumped: list[Any] = []
        sizes: list[int] = []
        parts: list[NewRow] = []  # tool calls, as items or as parts of a reply item
        names: list[str] = []
        # the reply as the next request carries it: its items as one list, and its tool
        # calls' rows' items (each a list of one) when they are items of their own
        carried = 0
        for item in items:
            described = self.codec.describe(item)
            head = described[0] if described else ItemRow("assistant", "")
            if head.kind == "tool_call":
                rows = self._rows_for(item, {}, described)
                carried += self._fresh[rows[0].metadata["keys"][0]][1] + 2
                parts += rows
            else:
                key, raw, size = self._remember(item)
                keys.append(key)
                dumped.append(raw)
                sizes.append(size)
                if head.text:
                    texts.append(head.text)
                parts += [self._part_row(d, {"part_of": key}, {}) for d in described[1:]]
            names += [str(d.name) for d in described if d.kind == "tool_call"]
        sent = self._pending_bytes
        self._pending_bytes = None
        meta: dict[str, Any] = {
            "items": dumped,
            "keys": keys,
            "context_tokens": context_tokens,
            "output_tokens": output_tokens,
            "usage": dict(usage or {}),
            "message_bytes": _list_size(sizes) + carried,
            "response_index": self._turns,
            "model": self.model,
        }
        if sent is not None and context_tokens > 0:
            # Without the provider's count (a stream without usage) the next estimate
            # measures the whole request instead of starting from a zero.
            meta["request_bytes"] = sent
            self._estimator.observe(sent, context_tokens)
        self._append([NewRow("assistant", "\n".join(texts), meta), *parts])
        self._turns += 1
        self._emit(
            ResponseEvent(
                self.window.index,
                "\n".join(texts),
                names,
                context_tokens,
                output_tokens,
                0.0,
                0.0,
            )
        )

    # -- the request -------------------------------------------------------------------

    def _stored(self, row: Row) -> tuple[list[Item], int] | None:
        """A row's framework items and their JSON size, rendered once per row (rows are
        append-only, so a window's request is re-rendered only where it grew)."""
        if row.id and row.id in self._cache:
            return self._cache[row.id]
        if "part_of" in row.metadata:
            return [], 0  # sent as part of its item's first row
        stored = row.metadata.get("items")
        keys = row.metadata.get("keys")
        if not isinstance(stored, list) or not isinstance(keys, list):
            return None
        # Items this process just recorded are sent as the framework gave them; only
        # those read back from the store are rebuilt from their JSON.
        items: list[Item] = []
        size = 0
        for k, raw in zip(keys, stored, strict=False):
            fresh = self._fresh.pop(str(k), None)
            items.append(fresh[0] if fresh else self.codec.load(raw))
            size += fresh[1] if fresh else _size(raw)
        size += sum(_size(raw) for raw in stored[len(keys) :])
        found = (items, size)
        if row.id:
            self._cache[row.id] = found
        return found

    def _render(
        self, rows: Sequence[Row], *, without_pending: bool = False
    ) -> tuple[list[Item], int]:
        """The items of ``rows`` and the request's size in bytes (the items as one JSON
        list, plus :attr:`fixed_bytes`): stored framework items as they were, consecutive
        text rows (lead-in, advisories, triggers) as one user message of text parts."""
        cut = _last_response_at(rows)
        # The rows up to the last response render the same at every dispatch of the
        # window (a response row ends any run of text rows): start after them.
        start, out, size = 0, [], 0
        prefix = self._prefix
        if (
            prefix is not None
            and rows is self._rows
            and prefix[0] <= len(rows)
            and prefix[0] <= cut + 1
        ):
            start, out, size = prefix[0], list(prefix[1]), prefix[2]
        texts: list[str] = []

        def flush() -> None:
            nonlocal size, texts
            if texts:
                message = self.codec.text_message(texts)
                out.append(message)
                size += _size(self.codec.dump(message))
                texts = []

        for i in range(start, len(rows)):
            row = rows[i]
            if row.kind == "boundary":
                continue
            stored = self._stored(row)
            if stored is not None:
                flush()
                out.extend(stored[0])
                size += stored[1]
                if i == cut and rows is self._rows:
                    self._prefix = (i + 1, list(out), size)
            elif row.kind in _TEXT_KINDS:
                if without_pending and row.kind == "warning" and i > cut:
                    continue
                texts.append(lead_in_text(row) if row.kind == "lead_in" else row.text or "")
        flush()
        # "[" + the items joined by "," + "]"
        total = self.fixed_bytes + size + max(len(out) - 1, 0) + 2
        if self.memory.view is not None and rows is self._rows:
            return self.memory.follow(out, total)
        return out, total

    def _last_response(self, rows: Sequence[Row]) -> LastResponse | None:
        for row in reversed(rows):
            if row.kind == "assistant":
                meta = row.metadata
                if "request_bytes" not in meta:
                    return None
                return LastResponse(
                    int(meta["context_tokens"]),
                    int(meta.get("output_tokens", 0)),
                    int(meta["request_bytes"]),
                    int(meta.get("message_bytes", 0)),
                )
        return None

    def _estimate(self, size: int, rows: Sequence[Row]) -> int:
        return estimate_request(size, self._last_response(rows), self._estimator.estimate_bytes)

    def _track(self, rows: Sequence[Row]) -> None:
        """Keep the open window's claims (its durable ``warning`` rows) and its largest
        provider-counted request as rows are added."""
        for r in rows:
            if r.kind == "warning" and isinstance(r.metadata.get("stage"), str):
                self._claims.add(str(r.metadata["stage"]))
            elif r.kind == "assistant" and isinstance(r.metadata.get("context_tokens"), int):
                self._max_context = max(self._max_context, int(r.metadata["context_tokens"]))

    def _state(self) -> WindowState:
        return WindowState(
            self.window.id, self.window.index, frozenset(self._claims), self._max_context
        )

    def _pending_new_context(self) -> bool:
        cut = _last_response_at(self._rows)
        after = self._rows[cut + 1 :]
        return any(r.kind == "tool_result" and r.metadata.get("new_context") for r in after)

    def _rollover(self, reason: SealReason) -> None:
        """Seal the open window with ``reason`` and open the next with its lead-in and
        triggering message; raise :class:`DispatchBlockedError` (nothing sealed) when not
        even the fresh window would hold its first request."""
        cut = _last_response_at(self._rows)
        usable = self.budget.usable_limit

        def measure(opening: tuple[NewRow, NewRow]) -> int:
            fresh = [
                Row(0, self.id, self.window.id, 0, r.kind, r.text, r.metadata, 0.0) for r in opening
            ]
            return self._estimate(self._render(fresh)[1], fresh)

        try:
            lead, trigger = window_opening(
                self.window,
                reason,
                workspace=self.workspace,
                notes_file=self.notes_file,
                history_available=True,
                usable_limit=usable,
                unseen=self._rows[cut + 1 :],
                measure=measure,
            )
        except RequestTooLargeError as exc:
            self._emit(
                DispatchEvent(self.window.index, exc.tokens, "block", None, reason="too_large")
            )
            raise DispatchBlockedError(str(exc)) from None
        old = self.window
        if any(r.metadata.get("system") for r in self._rows):
            warn_once(self.relay.warned, "instructions", _INSTRUCTIONS_LOST)
        seal_window(self.store, self.id, old, reason, opening=[lead, trigger], usable_limit=usable)
        self._load()
        notes = lead.metadata.get("notes_bytes")
        self._emit(RolloverEvent(old.index, self.window.index, reason, notes))

    def prepare(
        self,
        items: Sequence[Item],
        processed: Sequence[Item] | None = None,
        *,
        conversation: Conversation | None = None,
    ) -> SentRequest:
        """Record ``items`` (the framework's whole input for this call), apply the policy
        and return what to send instead. Raises :class:`DispatchBlockedError` when
        nothing may be sent.

        The open window is sent as the framework's memory holds it (see
        :meth:`_follow`); ``processed`` is ``items`` after the user's own processing of
        this request (a model-input filter, a history processor), whose changes the
        request carries: an item it changed is sent changed, one it removed is not sent,
        one it added is sent in its place. What the policy measures is that request.
        ``conversation``: the framework's key of the run's conversation (checked at the
        run's first call, see :meth:`_check_conversation`)."""
        self._held()
        self.memory.forget_except(items)
        self._seam(calling=True)
        if not self._started:
            self._check_memory(items)
            if conversation is not None:
                self._check_conversation(conversation)
            self.start()
        self._record_input(items)
        self.memory.look(items, processed)
        if self._pending_new_context():
            self._rollover("new_context")
        planned = self._dispatch()
        out, size = planned if planned is not None else self._render(self._rows)
        final = self._estimate(size, self._rows)
        guard = guard_request(
            self.budget, final, answered=any(r.kind == "assistant" for r in self._rows)
        )
        if guard == "rollover":
            self._rollover("emergency")
            out, size = self._render(self._rows)
            final = self._estimate(size, self._rows)
        elif guard == "pause":
            raise DispatchBlockedError(str(RequestTooLargeError(final, self.budget.usable_limit)))
        self._pending_bytes = size
        return SentRequest(out, final, size, self.window.index)

    def _dispatch(self) -> tuple[list[Item], int] | None:
        """Plan the request of the open window and act on the plan (publish, roll over
        and plan the fresh window's request, or block). Returns the request it planned
        on when that is the one to send (nothing was published), else ``None``."""
        cut = _last_response_at(self._rows)
        # A retried dispatch (its advisory already published) is planned on the request
        # as it was before that advisory, so it decides as the first attempt did.
        pending = any(r.kind == "warning" for r in self._rows[cut + 1 :])
        planned = self._render(self._rows, without_pending=pending)
        tokens = self._estimate(planned[1], self._rows)
        index = self.window.index
        target = DispatchTarget(
            self.store, self.id, self._emit, self.notes_file, self._estimator.estimate
        )
        step = dispatch_step(self.budget, tokens, target, self._state(), self.capability)
        if step.action == "rollover":
            reason = step.reason or "forced"
            self._emit(DispatchEvent(index, tokens, "rollover", None, reason=reason))
            self._rollover(reason)
            return self._dispatch()
        if step.action == "block":
            self.store.update_session(self.id, status="paused", metadata={"pause_reason": "limit"})
            self._running = False
            raise DispatchBlockedError(step.plan.message or "the policy blocked the request")
        if step.published is not None:
            self._rows.append(step.published)
            self._track([step.published])
            return None
        return None if pending or step.plan.advisory_text is not None else planned
