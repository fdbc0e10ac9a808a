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
import gc
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Self

from ctxrelay.budget import DEFAULT_NOTES_FILE, Budget, Capability
from ctxrelay.budget.models import canonical_model, model_facts
from ctxrelay.errors import (
    ConfigError,
    ConversationError,
    SessionInUseError,
    SessionNotFoundError,
    StoreError,
    StoreUnavailableError,
    UnsupportedSchemaError,
)
from ctxrelay.integrations._items import (
    _NOT_OFFERED,
    _SEALING_KEY,
    NEW_CONTEXT,
    NEW_CONTEXT_DESCRIPTION,
    Codec,
    ItemRow,
    Sealing,
    SentRequest,
)
from ctxrelay.integrations._run import Run, _current_task
from ctxrelay.integrations._support import budget_for, check_versions, provider_of, warn_once
from ctxrelay.runtime import NewContextPolicy
from ctxrelay.runtime.events import (
    EventSink,
)
from ctxrelay.runtime.plan import (
    capability_for,
)
from ctxrelay.runtime.tools import Tool, ToolContext, ToolResult
from ctxrelay.runtime.tools.context import NewContext, SessionHistory
from ctxrelay.store import (
    LEASE_TTL_S,
    Store,
    open_store,
)
from ctxrelay.store._lease import Holding, hold_lease

__all__ = [
    "NEW_CONTEXT",
    "NEW_CONTEXT_DESCRIPTION",
    "Codec",
    "FrameworkRelay",
    "ItemRow",
    "Relay",
    "Run",
    "SentRequest",
]

#: Longest pause between two looks at a held lease while a coroutine waits for it.
_WAIT_POLL_MAX_S = 0.05


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

    def bound(self) -> str | None:
        """The framework's key of the conversation the relay holds (``None``: none yet)."""
        if self.conversation is None:
            stored = self.store.get_session(self.id).metadata.get("conversation")
            self.conversation = None if stored is None else str(stored)
        return self.conversation

    def bind(self, key: str) -> None:
        """Bind the relay to the framework's own key of a conversation (``thread_id='alice'``,
        ``session='alice'``), kept in the session: raise :class:`ConversationError` when
        it already holds another one (a relay is one conversation)."""
        if self.bound() is None:
            self.store.update_session(self.id, metadata={"conversation": key})
            self.conversation = key
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
        ctx = self._context(call_id)
        result = await NewContext().run({}, ctx)
        if result.metadata.get("new_context") and not result.is_error:
            # The outcome as a value, durable before the framework has the text: the
            # result the framework hands back later (as it is, or as the user's own
            # code reshaped it) is matched by its call, never by its words.
            outcome = Sealing(ctx.window_index, call_id)
            self.store.update_session(self.id, metadata={_SEALING_KEY: outcome.dump()})
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
