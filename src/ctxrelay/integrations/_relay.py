"""The framework-neutral half of every integration: one ctxrelay session under a
framework's own agent loop.

A framework calls the model with a list of its own items (messages, tool calls, tool
results). Before each call, the integration hands that list to :meth:`Relay.prepare`,
which

1. records the items it has not seen as rows of the open window (so ``session_history``
   and ``ctxrelay sessions show`` see them as they see the runtime's);
2. seals the window when the last step's ``new_context`` call succeeded (the framework
   calls the model only after every tool call of a step has settled);
3. plans the dispatch with the runtime's pure :func:`~ctxrelay.runtime.plan_dispatch`
   on the request about to be sent (the provider's count of the window's last request
   plus an estimate of what was appended) and acts on it exactly as the runtime does:
   an advisory row and its claim committed before the request, a forced rollover, or a
   block with nothing sent;
4. returns the items to send: the open window's rows in order (its lead-in and
   triggering message first after a rollover, advisories where they were published),
   never an item of a sealed window.

After the call, :meth:`Relay.record_response` stores the model's reply with the usage the
provider reported. Everything is re-derived from durable rows, so a new process that opens
the same session id continues the same window and never repeats an advisory.

The framework adapter supplies a :class:`Codec`: how to key, describe, measure and build
its items. Nothing here imports a framework.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import json
import operator
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, Self

from ctxrelay.budget import DEFAULT_NOTES_FILE, Budget, Capability
from ctxrelay.budget.models import canonical_model, model_facts
from ctxrelay.errors import (
    ConfigError,
    ConversationError,
    DispatchBlockedError,
    RequestTooLargeError,
    SessionInUseError,
    SessionNotFoundError,
    StoreError,
    StoreUnavailableError,
    UnsupportedSchemaError,
)
from ctxrelay.integrations._support import budget_for, check_versions, provider_of, warn_once
from ctxrelay.runtime import NewContextPolicy
from ctxrelay.runtime._tools import interrupted_text
from ctxrelay.runtime.dispatch import dispatch_step
from ctxrelay.runtime.estimate import BytesPerTokenEstimator
from ctxrelay.runtime.events import (
    DispatchEvent,
    EndEvent,
    Event,
    EventSink,
    ResponseEvent,
    RolloverEvent,
    StartEvent,
    ToolEvent,
)
from ctxrelay.runtime.plan import (
    LastResponse,
    WindowState,
    capability_for,
    estimate_request,
    guard_request,
)
from ctxrelay.runtime.tools import Tool, ToolContext, ToolResult
from ctxrelay.runtime.tools.context import NewContext, SessionHistory
from ctxrelay.runtime.windows import lead_in_text, seal_window, window_opening
from ctxrelay.store import (
    LEASE_TTL_S,
    Lease,
    NewRow,
    Row,
    RowKind,
    SealReason,
    Store,
    WindowInfo,
    open_store,
)
from ctxrelay.store._lease import Holding, hold_lease

__all__ = [
    "Codec",
    "FrameworkRelay",
    "ItemRow",
    "Relay",
    "Run",
    "SentRequest",
]

#: Longest pause between two looks at a held lease while a coroutine waits for it.
_WAIT_POLL_MAX_S = 0.05

Item = Any
"""One framework item (a message, a tool call, a tool result), as the framework holds it."""


@dataclass(frozen=True, slots=True)
class ItemRow:
    """How one framework item is stored: the row kind and text ctxrelay shows, and for
    tool calls and results the call id and tool name."""

    kind: RowKind
    text: str
    call_id: str | None = None
    name: str | None = None
    arguments: Mapping[str, Any] | None = None
    system: bool = False
    """The item carries the framework's standing instructions (a system message)."""


class Codec(Protocol):
    """What an integration tells the relay about its framework's items."""

    def key(self, item: Item) -> str:
        """A key equal for the same item however the framework hands it back (for
        example after its own session memory stored and reloaded it)."""
        ...

    def describe(self, item: Item) -> Sequence[ItemRow]:
        """The rows this item is stored as: one, or one per part of a message that holds
        several (a reply's text and its tool calls; several tool results)."""
        ...

    def dump(self, item: Item) -> Any:
        """The item as JSON (stored in the row, and measured as the request's bytes)."""
        ...

    def load(self, raw: Any) -> Item:
        """An item from its stored JSON."""
        ...

    def text_message(self, texts: Sequence[str]) -> Item:
        """A user message made of these text parts (lead-ins, advisories, triggers)."""
        ...

    def tool_output(self, call_id: str, name: str, text: str) -> Item:
        """The result item of a tool call (for a call a restart interrupted)."""
        ...


@dataclass(frozen=True, slots=True)
class SentRequest:
    """What :meth:`Relay.prepare` decided to send."""

    items: list[Item]
    tokens: int
    request_bytes: int
    window_index: int


_TEXT_KINDS = frozenset({"lead_in", "warning", "user"})


def _last_response_at(rows: Sequence[Row]) -> int:
    """The index of the last response row of ``rows`` (``-1``: none), found from the end:
    what follows it is the current step's."""
    for i in range(len(rows) - 1, -1, -1):
        if rows[i].kind == "assistant":
            return i
    return -1


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


def _size(value: Any) -> int:
    """The size in bytes of ``value`` as compact JSON (how a request's items are measured)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _list_size(sizes: Sequence[int]) -> int:
    """:func:`_size` of a list whose items' sizes are ``sizes``: ``[`` ``,`` ``]``."""
    return sum(sizes) + max(len(sizes) - 1, 0) + 2


class Relay:
    """One ctxrelay session driven by a framework's loop (see the module docstring).

    ``budget`` bounds the window (build it from the model table with
    :func:`ctxrelay.integrations.budget_for`); ``workspace`` and ``notes_file`` name the
    notes the next window's lead-in carries; ``new_context`` is the runtime's policy for
    the tool (``offered``, ``conditional`` or ``forbidden``). ``session_id`` resumes (or
    creates, with that id) a stored session.

    One run drives a session at a time: :meth:`begin` takes the session's lease in the
    store for a run and returns the :class:`Run` that holds it and all of the run's
    state; a second run of the session, in this process or another, fails with
    :class:`~ctxrelay.errors.SessionInUseError` (or waits up to ``wait`` seconds for the
    first to end). The relay itself holds only the session's configuration."""

    def __init__(
        self,
        store: Store,
        budget: Budget,
        *,
        codec: Codec,
        framework: str,
        session_id: str | None = None,
        workspace: Path | str = Path("."),
        notes_file: str = DEFAULT_NOTES_FILE,
        new_context: NewContextPolicy = "offered",
        model: str = "",
        task: str | None = None,
        on_event: EventSink | None = None,
        wait: float = 0.0,
        lease_ttl: float = LEASE_TTL_S,
    ) -> None:
        if new_context not in ("offered", "conditional", "forbidden"):
            raise ConfigError(
                f"new_context must be offered, conditional or forbidden, not {new_context!r}"
            )
        self.store = store
        self.budget = budget
        self.codec = codec
        self.framework = framework
        self.workspace = Path(workspace).resolve()
        self.notes_file = notes_file
        self.new_context = new_context
        self.model = model
        self.on_event = on_event
        if not wait >= 0:
            raise ConfigError(f"wait must be a number of seconds >= 0, not {wait!r}")
        self.wait = wait
        self.lease_ttl = lease_ttl
        self.id = self._open_session(session_id, task)
        self._runs: weakref.WeakSet[Run] = weakref.WeakSet()
        self.seam = "call Relay.begin() and hand each model call to Run.prepare"
        """What to pass so ctxrelay sees the framework's model calls (the integration's
        own words: ``pass **relay.run_kwargs() to Runner.run``)."""
        self.expected_model: str | None = None
        """The model whose window set the budget, when the model table set it: the
        framework's model is checked against it at each run's first call."""
        self.warned: set[str] = set()
        """The warnings this relay gave (each is given once)."""
        self._checked: set[str] = set()
        self.conversation: str | None = None
        """The framework's key of the conversation this relay holds, once one was given
        (:meth:`bind`)."""

    @classmethod
    def connect(
        cls,
        store: Store | str | Path,
        *,
        codec: Codec,
        framework: str,
        model: str = "",
        provider: str = "openai",
        budget: Budget | None = None,
        **options: Any,
    ) -> Relay:
        """A relay on ``store`` (a store, a SQLite path or a ``postgresql://`` URL) with
        the budget of ``provider:model`` from the model table unless ``budget`` is given;
        ``options`` as for the constructor (``session_id``, ``workspace``, ...)."""
        if not isinstance(store, Store):
            store = open_store(store)
        if budget is None:
            budget = budget_for(provider, model)
        return cls(store, budget, codec=codec, framework=framework, model=model, **options)

    # -- session -----------------------------------------------------------------------

    def _open_session(self, session_id: str | None, task: str | None) -> str:
        if session_id is not None:
            try:
                info = self.store.get_session(session_id)
            except SessionNotFoundError:
                info = None
            if info is not None:
                return info.id
        meta: dict[str, Any] = {
            "runtime": self.framework,
            "model": self.model,
            "config": {
                "workspace": str(self.workspace),
                "notes_file": self.notes_file,
                "new_context": self.new_context,
                "budget": {
                    "limit": self.budget.limit,
                    "output_reserve": self.budget.output_reserve,
                    "threshold": self.budget.threshold,
                },
            },
        }
        if task is not None:
            meta["task"] = task
        return self.store.create_session(metadata=meta, session_id=session_id).id

    # -- runs --------------------------------------------------------------------------

    def begin(self, *, timeout: float | None = None) -> Run:
        """Take the session's lease for one run (waiting up to ``timeout`` seconds, by
        default :attr:`wait`) and return the run. Raises ``SessionInUseError``."""
        wait = self.wait if timeout is None else timeout
        self._end_finished()
        try:
            holding = hold_lease(self.store, self.id, ttl=self.lease_ttl, label=self.framework)
        except SessionInUseError as exc:
            if not (exc.mine and self._collect()) and wait <= 0:
                raise
            holding = hold_lease(
                self.store, self.id, timeout=wait, ttl=self.lease_ttl, label=self.framework
            )
        return self._run(holding)

    async def begin_async(self, *, timeout: float | None = None) -> Run:
        """:meth:`begin` for a coroutine: waits for the lease without blocking the loop
        (the holder may be another task of the same loop)."""
        wait = self.wait if timeout is None else timeout
        deadline = time.monotonic() + wait
        pause = 0.002
        self._end_finished()
        collected = False
        while True:
            try:
                holding = hold_lease(self.store, self.id, ttl=self.lease_ttl, label=self.framework)
            except SessionInUseError as exc:
                if exc.mine and not collected:
                    collected = True
                    if self._collect():
                        continue
                if time.monotonic() >= deadline:
                    raise
                await asyncio.sleep(min(pause, max(0.0, deadline - time.monotonic())))
                pause = min(pause * 2, _WAIT_POLL_MAX_S)
                continue
            return self._run(holding)

    def _run(self, holding: Holding) -> Run:
        try:
            run = Run(self, holding)
        except BaseException:
            holding.release()
            raise
        self._runs.add(run)
        # A run whose end the framework never showed (an error outside ctxrelay's seams)
        # gives the lease up when it is freed.
        weakref.finalize(run, holding.release)
        return run

    def _end_finished(self) -> None:
        """Release the lease of every run of this relay whose end the framework did not
        show but which is over for certain (:meth:`Run.finished`)."""
        task = _current_task()
        for run in list(self._runs):
            if not run.released and run.finished(task):
                run.release()

    def _collect(self) -> bool:
        """Whether a run of this relay that nothing reaches any more (its framework's
        loop ended by an exception ctxrelay did not see, and the exception is gone)
        gave the lease up, after a full collection frees it. Only when this process
        holds the lease: the cost is paid on contention, never by a run that goes
        ahead."""
        if not any(not run.released for run in self._runs):
            return False
        gc.collect()
        return self.store.lease(self.id) is None

    def close(self) -> None:
        """Release the lease of every run of this relay still holding one."""
        for run in list(self._runs):
            run.release()

    def running(self) -> bool:
        """Whether a run of this relay is under way (its seams saw the model calls)."""
        return any(not run.released for run in self._runs)

    def _unseen(self, tool: str) -> bool:
        """Warn once, and say so, when one of ctxrelay's tools runs while no run of this
        relay is under way: the framework was given the tools without the seam, so ctxrelay
        sees no model call, stores nothing and seals nothing."""
        if self.running():
            return False
        warn_once(
            self.warned,
            "seam",
            f"ctxrelay's {tool} tool ran but ctxrelay saw none of the agent's model calls, "
            f"so nothing is stored or sealed: {self.seam}",
        )
        return True

    def bind(self, key: str) -> None:
        """Bind the relay to the framework's own key of a conversation (``thread_id='alice'``,
        ``session='alice'``), kept in the session: raise :class:`ConversationError` when
        it already holds another one (a relay is one conversation)."""
        if self.conversation is None:
            stored = self.store.get_session(self.id).metadata.get("conversation")
            if stored is None:
                self.store.update_session(self.id, metadata={"conversation": key})
                stored = key
            self.conversation = str(stored)
        if self.conversation != key:
            raise ConversationError(self.id, self.conversation, key, self.framework)

    def check_model(self, actual: str | None) -> None:
        """Raise :class:`ConfigError` when ``actual`` (the model the framework is about to
        call) is another model of the table than the one whose window set the budget (a
        name the table does not know, a fallback chain say, is not compared)."""
        expected = self.expected_model
        if not expected or not actual or actual in self._checked:
            return
        if model_facts(actual) is not None and canonical_model(actual) != canonical_model(expected):
            raise ConfigError(
                f"the agent calls {actual} but ctxrelay was opened with model={expected!r}, "
                f"whose window sets the budget; open it with model={actual!r} (or pass the "
                "agent's model itself as model=)"
            )
        self._checked.add(actual)

    # -- capability --------------------------------------------------------------------

    @property
    def capability(self) -> Capability:
        return capability_for(self.new_context, new_context_tool=True, session_history=True)

    @property
    def offer_new_context(self) -> bool:
        return not self.budget.off and self.capability is not Capability.DEGRADED

    # -- the agent's tools -------------------------------------------------------------

    def _context(self, call_id: str) -> ToolContext:
        # The open window as the store has it (a tool runs inside a run, which holds the
        # lease: nobody else moves the window meanwhile).
        window = self.store.current_window(self.id)
        return ToolContext(
            workspace=self.workspace,
            store=self.store,
            session_id=self.id,
            window_id=window.id,
            window_index=window.index,
            call_id=call_id,
            notes_file=self.notes_file,
        )

    async def run_new_context(self, call_id: str = "") -> str:
        """Run ``new_context`` for the agent: the window seals before the next model call
        (once the framework has settled the step's other tool calls)."""
        if not self.offer_new_context:
            return _NOT_OFFERED
        if self._unseen(NEW_CONTEXT):
            return (
                "new_context failed: ctxrelay sees none of this agent's model calls, so no "
                f"window is sealed and nothing was stored; {self.seam}"
            )
        result = await NewContext().run({}, self._context(call_id))
        return result.content

    async def run_tool(self, tool: Tool, args: Mapping[str, Any], call_id: str = "") -> ToolResult:
        """Run one of ctxrelay's own tools (``read_file``, ``write_file``, ...) for the
        agent, with this session's workspace, store and window; a tool's failure comes
        back as an error result, as in the runtime."""
        if tool.name == NEW_CONTEXT:
            return ToolResult(await self.run_new_context(call_id))
        self._unseen(tool.name)
        try:
            return await tool.run(args, self._context(call_id))
        except Exception as exc:  # a tool's bug must not kill the session
            return ToolResult(f"{tool.name} failed: {exc}", is_error=True)

    async def run_session_history(self, args: Mapping[str, Any], call_id: str = "") -> ToolResult:
        """Run ``session_history`` for the agent (list, search or read earlier windows)."""
        self._unseen("session_history")
        return await SessionHistory().run(args, self._context(call_id))


class Run:
    """One run of a framework's agent on a relay's session: it holds the session's lease
    (renewed while the run lasts) and every piece of state a run needs, re-derived from
    the store when it begins, so two runs never share any. A framework's pre-call seam
    calls :meth:`prepare`, its post-call seam :meth:`record_response`, and its end
    :meth:`release`."""

    def __init__(self, relay: Relay, holding: Holding) -> None:
        self.relay = relay
        self.store = relay.store
        self.budget = relay.budget
        self.codec = relay.codec
        self.id = relay.id
        self.framework = relay.framework
        self.workspace = relay.workspace
        self.notes_file = relay.notes_file
        self.model = relay.model
        self.on_event = relay.on_event
        self.capability = relay.capability
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
        self._begin_view()

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
        known = self._stored_keys()
        if replies and not any(self._key(i) in known for i in earlier):
            raise ConversationError(
                self.id,
                self.relay.conversation,
                f"the memory of another conversation ({len(earlier)} earlier messages, none "
                "of them this session's)",
                self.framework,
            )

    def _emit(self, event: Event) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def start(self) -> None:
        """Emit the start event (hosts that show a timeline call it once per run)."""
        b = self.budget
        self._started = True
        self._running = True
        self.store.update_session(self.id, status="running", metadata={"pause_reason": None})
        self._emit(
            StartEvent(
                self.id,
                self.window.index,
                self._resumed,
                b.usable_limit,
                b.handoff_target,
                b.warning_at,
                self.model or self.framework,
            )
        )

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

    def _new_items(self, items: Sequence[Item]) -> Sequence[Item]:
        """The items of ``items`` not yet stored, matched to the stored ones by identity
        (the codec's key), never by position alone:

        - those after the last stored item (its last occurrence), the usual case;
        - when it is absent but ``items`` opens with the session's first stored item,
          the framework resent its own memory (a session, ``message_history``, a
          checkpoint) which lost the tail ctxrelay stored (a crash): the items after the
          last one that matches a stored item, in order, are new;
        - otherwise all of them (a run given only new input).

        A prompt whose request was lost (the last stored item, with no answer after it)
        that the next run sends again matches that item: it is the same prompt, retried,
        and is recorded once. Any other item is new when the framework cannot have resent
        it: a call always ends with something new (a prompt, a tool's result), so a last
        item equal to an earlier stored one (the first prompt asked again) is a new one."""
        if not self._keys or not items:
            return items
        last = self._keys[-1]
        for j in range(len(items) - 1, -1, -1):  # from the end: the new items are few
            if self._key(items[j]) == last:
                return items[j + 1 :]
        keys = [self._key(i) for i in items]
        if keys[0] != self._keys[0]:
            return items
        stored, at, known = self._keys, 0, 0
        for j, key in enumerate(keys):
            try:
                at = stored.index(key, at) + 1
            except ValueError:
                continue  # the framework's own item, not ctxrelay's to record
            known = j + 1
        return items[min(known, len(items) - 1) :]

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
            if name == NEW_CONTEXT and d.text.startswith(_SEALING):
                meta["new_context"] = True
        return NewRow(d.kind, text, meta)

    def _remember(self, item: Item) -> tuple[str, Any, int]:
        """The key, JSON and JSON size of an item this process records (kept as fresh)."""
        key = self._key(item)
        raw = self.codec.dump(item)
        size = _size(raw)
        self._fresh[key] = (item, size)
        return key, raw, size

    def _rows_for(self, item: Item, calls: Mapping[str, str]) -> list[NewRow]:
        """The rows of one item: the first carries the item (and is what is sent); the
        others (the further parts of a message that holds several) are its parts, for
        ``session_history`` and ``sessions show``, and send nothing themselves."""
        key, raw, _ = self._remember(item)
        rows: list[NewRow] = []
        for i, d in enumerate(self.codec.describe(item)):
            meta: dict[str, Any] = {"items": [raw], "keys": [key]} if i == 0 else {"part_of": key}
            rows.append(self._part_row(d, meta, calls))
        return rows

    def _interrupted(self, new: Sequence[NewRow]) -> list[NewRow]:
        """Results for the last response's tool calls that have none and get none from
        ``new`` (the rows of this call's new items): a process died while they ran. The
        model is told, as by the runtime."""
        cut = _last_response_at(self._rows)
        after = self._rows[cut + 1 :]
        results: list[Row | NewRow] = [*after, *new]
        done = {str(r.metadata.get("tool_call_id")) for r in results if r.kind == "tool_result"}
        rows: list[NewRow] = []
        for call in after:
            call_id = str(call.metadata.get("id"))
            if call.kind != "tool_call" or call_id in done:
                continue
            name = str(call.metadata.get("name", ""))
            text = interrupted_text(name)
            item = self.codec.tool_output(call_id, name, text)
            meta = {
                "items": [self.codec.dump(item)],
                "keys": [self.codec.key(item)],
                "tool_call_id": call_id,
                "name": name,
                "is_error": True,
            }
            rows.append(NewRow("tool_result", text, meta))
        return rows

    def _record_input(self, items: Sequence[Item]) -> None:
        new = self._new_items(items)
        calls = self._calls()
        rows = [row for item in new for row in self._rows_for(item, calls)]
        # A call left without its result is answered even when nothing else is new:
        # a provider rejects every request that carries an unanswered call.
        rows = self._interrupted(rows) + rows
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
        new = [
            i
            for i in self._new_items(items)
            if all(d.kind == "tool_result" and d.call_id in calls for d in self.codec.describe(i))
        ]
        if new:
            self._append([row for item in new for row in self._rows_for(item, calls)])

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
                rows = self._rows_for(item, {})
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
        if self._view is not None and rows is self._rows:
            return self._follow(out, total)
        return out, total

    # -- the framework's memory and the user's processing ------------------------------

    def _begin_view(self) -> None:
        self._view: _View | None = None
        self._view_items: Sequence[Item] = ()
        self._before = frozenset(self._keys)  # what the store held when the run began
        self._known: set[str] = set()
        self._known_of: tuple[int, int] = (0, 0)
        self._holds: set[str] | None = None  # the keys the framework held at its last call
        self._held_sig: tuple[int, str, str] | None = None
        self._head = 0  # how many items the framework's memory holds ahead of ctxrelay's
        self._dropped: set[str] = set()
        self._key_of: dict[int, tuple[Item, str]] = {}
        self._same: dict[int, tuple[Item, bool]] = {}

    def _key(self, item: Item) -> str:
        """The codec's key, once per item object of the run (pydantic-ai and LangChain
        hand the same objects back at every call)."""
        hit = self._key_of.get(id(item))
        if hit is not None and hit[0] is item:
            return hit[1]
        key = self.codec.key(item)
        self._key_of[id(item)] = (item, key)
        return key

    def _stored_keys(self) -> set[str]:
        """The keys of every framework item the session stored (kept as rows are added)."""
        keys = self._keys
        if self._known_of[0] != id(keys) or self._known_of[1] > len(keys):
            self._known = set(keys)
        else:
            self._known.update(keys[self._known_of[1] :])
        self._known_of = (id(keys), len(keys))
        return self._known

    def _window_keys(self) -> list[str]:
        """The keys of the open window's framework items, in order."""
        return [str(k) for r in self._rows for k in r.metadata.get("keys") or ()]

    def _look(self, items: Sequence[Item], processed: Sequence[Item] | None) -> _View | None:
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
        known = self._stored_keys()
        n = len(items)
        sig = self._held_sig
        grew = (
            sig is not None
            and n >= sig[0]
            and self._key(items[0]) == sig[1]
            and self._key(items[sig[0] - 1]) == sig[2]
        )
        if grew and self._holds is not None and sig is not None:  # it only appended
            self._holds.update(self._key(i) for i in items[sig[0] :])
        else:
            keys = [self._key(i) for i in items]
            held = set(keys)
            first = next((j for j, k in enumerate(keys) if k in known), None)
            window = self._window_keys()
            self._head = 0
            if first is not None and keys[first] in window:
                self._head = first  # the items ahead of it are none of the store's
                if self._holds is None and keys[first] in self._before:
                    self._dropped |= set(window[: window.index(keys[first])])
            if self._holds is not None:
                self._dropped |= self._holds - held
            self._holds = held
        self._held_sig = (n, self._key(items[0]), self._key(items[-1])) if n else None
        held = self._holds or set()
        dropped = self._dropped - held
        anchors: dict[str, list[Item]] = {}
        if self._head and self._head < n:
            anchors[self._key(items[self._head])] = list(items[: self._head])
        if processed is None or processed is items:
            if not dropped and not anchors and processed is None:
                return None
            return _View(dropped, anchors, [], {}, replaced=processed is items)
        # The user's own processing of this request: what it removed, changed and added.
        sentkeys = [self._key(i) for i in processed]
        dropped |= held - set(sentkeys)
        inwindow = set(self._window_keys())
        changed = {k: f for k, f in zip(sentkeys, processed, strict=True) if k in inwindow}
        pending: list[Item] = []
        for k, f in zip(sentkeys, processed, strict=True):
            if k not in known and k not in held:
                pending.append(f)
            elif k in inwindow and k not in dropped and pending:
                anchors.setdefault(k, []).extend(pending)
                pending = []
        return _View(dropped, anchors, pending, changed, replaced=False)

    def _follow(self, out: list[Item], size: int) -> tuple[list[Item], int]:
        """``out`` (the open window's request, of ``size`` bytes) with this call's
        :class:`_View` applied, and its size."""
        view = self._view
        assert view is not None
        changed = view.changed
        if view.replaced:  # the framework's objects that are not the ones ctxrelay sends
            items = self._view_items
            if len(items) != len(out) or not all(map(operator.is_, items, out)):
                sent = {id(i) for i in out}
                changed = {self._key(i): i for i in items if id(i) not in sent}
        if not view.dropped and not view.anchors and not view.trailing and not changed:
            return out, size
        result: list[Item] = []
        last = -1
        for item in out:
            k = self._key(item)
            if k in view.dropped:
                size -= _size(self.codec.dump(item)) + 1
                continue
            for extra in view.anchors.get(k, ()):
                result.append(extra)
                size += _size(self.codec.dump(extra)) + 1
            new = changed.get(k)
            if new is not None and new is not item and not self._equal(new, item):
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

    def _equal(self, new: Item, old: Item) -> bool:
        """Whether the framework's ``new`` object is ``old`` as JSON (asked once per
        object: a history resent after a restart is equal, a stubbed output is not)."""
        hit = self._same.get(id(new))
        if hit is not None and hit[0] is new:
            return hit[1]
        same = bool(self.codec.dump(new) == self.codec.dump(old))
        self._same[id(new)] = (new, same)
        return same

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
        lead, trigger = window_opening(
            self.window,
            reason,
            workspace=self.workspace,
            notes_file=self.notes_file,
            history_available=True,
            usable_limit=usable,
            unseen=self._rows[cut + 1 :],
        )
        fresh = [
            Row(0, self.id, self.window.id, 0, r.kind, r.text, r.metadata, 0.0)
            for r in (lead, trigger)
        ]
        needed = self._estimate(self._render(fresh)[1], fresh)
        if needed > usable:
            self._emit(DispatchEvent(self.window.index, needed, "block", None, reason="too_large"))
            raise DispatchBlockedError(str(RequestTooLargeError(needed, usable)))
        old = self.window
        if any(r.metadata.get("system") for r in self._rows):
            warn_once(self.relay.warned, "instructions", _INSTRUCTIONS_LOST)
        seal_window(self.store, self.id, old, reason, opening=[lead, trigger], usable_limit=usable)
        self._load()
        notes = lead.metadata.get("notes_bytes")
        self._emit(RolloverEvent(old.index, self.window.index, reason, notes))

    def prepare(
        self, items: Sequence[Item], processed: Sequence[Item] | None = None
    ) -> SentRequest:
        """Record ``items`` (the framework's whole input for this call), apply the policy
        and return what to send instead. Raises :class:`DispatchBlockedError` when
        nothing may be sent.

        The open window is sent as the framework's memory holds it (see
        :meth:`_follow`); ``processed`` is ``items`` after the user's own processing of
        this request (a model-input filter, a history processor), whose changes the
        request carries: an item it changed is sent changed, one it removed is not sent,
        one it added is sent in its place. What the policy measures is that request."""
        self._held()
        self._seam(calling=True)
        if not self._started:
            self._check_memory(items)
            self.start()
        self._record_input(items)
        self._view_items = items
        self._view = self._look(items, processed)
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
        step = dispatch_step(
            self.budget,
            tokens,
            store=self.store,
            session_id=self.id,
            window=self._state(),
            capability=self.capability,
            emit=self._emit,
            notes_file=self.notes_file,
            estimate_text=self._estimator.estimate,
        )
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


@dataclass(frozen=True, slots=True)
class _View:
    """What one call's framework memory and user processing change in the open window's
    request (:meth:`Run._look`): keys not to send, items to send before a key's item,
    items to send after the window's last held item, and items to send instead of the
    window's of the same key (``replaced``: the framework's current objects)."""

    dropped: set[str]
    anchors: dict[str, list[Item]]
    trailing: list[Item]
    changed: dict[str, Item]
    replaced: bool


NEW_CONTEXT = NewContext().name
NEW_CONTEXT_DESCRIPTION = NewContext().description
_SEALING = "window "
_INSTRUCTIONS_LOST = (
    "the window just sealed held the agent's instructions as a message (pydantic-ai's "
    "system_prompt=, a LangChain SystemMessage in the input, a system or developer input "
    "item), and the next window does not send it: ctxrelay sends the open window only. "
    "Give standing instructions where the framework sends them with every request: "
    "pydantic-ai Agent(instructions=...), LangChain create_agent(system_prompt=...), "
    "the Agents SDK's Agent(instructions=...)"
)
_NOT_OFFERED = (
    "new_context is not available in this session; checkpoint your notes and keep "
    "working: the window rolls over at the hard limit"
)


class FrameworkRelay:
    """What the three integrations share: :meth:`open` and :attr:`session_id`. A subclass
    names its framework, its extra and its codec, says what to pass so ctxrelay sees the
    model calls, and is built as ``cls(relay, tools)`` from a :class:`Relay` and the
    ctxrelay tools to offer."""

    FRAMEWORK: ClassVar[str]
    EXTRA: ClassVar[str]
    FEATURE: ClassVar[str]
    SEAM: ClassVar[str]
    """What to pass so ctxrelay sees the model calls, in the framework's words."""
    CODEC: ClassVar[Callable[[], Codec]]
    """The framework's codec; making one raises
    :class:`~ctxrelay.errors.MissingExtraError` when the framework is not installed."""
    relay: Relay

    def __init__(self, relay: Relay, tools: Sequence[Tool] = ()) -> None:
        raise NotImplementedError

    @classmethod
    def model_of(cls, model: Any) -> tuple[str | None, str]:
        """``(provider or None, model name)`` of a framework's model or agent given as
        ``model=`` (a subclass reads its framework's objects); a string is a name."""
        if isinstance(model, str):
            return None, model
        raise ConfigError(
            f"model must be a model name or the framework's model or agent, not {model!r}"
        )

    @classmethod
    def open(
        cls,
        store: Store | str | Path,
        *,
        session_id: str | None = None,
        model: Any = "",
        provider: str | None = None,
        budget: Budget | None = None,
        workspace: Path | str = Path("."),
        notes_file: str = DEFAULT_NOTES_FILE,
        new_context: NewContextPolicy = "offered",
        task: str | None = None,
        on_event: EventSink | None = None,
        tools: Sequence[Tool] = (),
        wait: float = 0.0,
        lease_ttl: float = LEASE_TTL_S,
    ) -> Self:
        """Open (or create) the ctxrelay session ``session_id`` in ``store`` (a store, a
        SQLite path or a ``postgresql://`` URL, as a ``str`` or a ``Path``).

        ``model`` is the model's name, or the framework's own model or agent, from which
        the name is read. The budget comes from the model table for ``provider:model``
        unless ``budget`` is given; ``provider`` defaults to the model's own prefix
        (``anthropic:claude-sonnet-4-5``) or to the vendor the table lists it under, and
        the agent's model is checked against it at each run's first model call.
        ``tools``: ctxrelay tools (for example ``ReadFile()``) to offer the agent beside
        ``new_context`` and ``session_history``. Each run of the agent holds the
        session's lease: a run that finds another holding it fails with
        ``SessionInUseError``, or waits up to ``wait`` seconds for it; ``lease_ttl`` is
        how long a lease outlives a holder that stopped renewing it (a crash on another
        machine).

        Raises ``MissingExtraError`` without the framework, ``UnsupportedFrameworkError``
        when its version is outside the extra's range, ``UnknownModelError`` for a model
        the table does not know (pass ``budget=``), and ``StoreUnavailableError`` when
        the store cannot be written."""
        codec = cls.CODEC()  # the framework's check, before anything is stored
        check_versions(cls.FEATURE, cls.EXTRA)
        found, name = cls.model_of(model)
        if not name and budget is None:
            raise ConfigError(
                "pass model= (the model's name, or the framework's model or agent), whose "
                "window sets the budget, or budget=budget_for(provider, model, limit=TOKENS)"
            )
        provider, name = provider_of(name, provider or found)
        try:
            relay = Relay.connect(
                store,
                codec=codec,
                framework=cls.FRAMEWORK,
                model=name,
                provider=provider,
                budget=budget,
                session_id=session_id,
                workspace=workspace,
                notes_file=notes_file,
                new_context=new_context,
                task=task,
                on_event=on_event,
                wait=wait,
                lease_ttl=lease_ttl,
            )
            _probe_writable(relay)
        except (SessionInUseError, StoreUnavailableError, UnsupportedSchemaError):
            raise
        except StoreError as exc:
            raise StoreUnavailableError(
                f"the store {store} cannot be written ({exc}); a relay records every "
                "model call, so open it on a store this process can write"
            ) from exc
        relay.seam = cls.SEAM
        if budget is None:
            relay.expected_model = name
        return cls(relay, tools)

    @property
    def session_id(self) -> str:
        return self.relay.id

    def close(self) -> None:
        """Release the session's lease if a run of this relay still holds it (a run the
        framework stopped without ctxrelay seeing its end)."""
        self.relay.close()


def _probe_writable(relay: Relay) -> None:
    """Take the session's lease and give it up at once: a store that cannot be written
    fails here, at ``open()``, not at the first model call. A lease someone else holds
    proves the store writable too (the run itself waits for it or fails then)."""
    with contextlib.suppress(SessionInUseError):
        relay.store.release_lease(
            relay.store.acquire_lease(relay.id, ttl=relay.lease_ttl, label=relay.framework)
        )
