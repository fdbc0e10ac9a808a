"""The agent loop: one session, its windows, its rows, driven through the store.

Every decision is re-derived from durable rows, never from memory, so a process killed
at any point resumes without repeating an advisory, losing a row or sending an
oversized request. Each loop iteration looks at the open window and does the one thing
its rows call for:

1. a legacy ``flush`` row: run the old one memory-only step, then seal ``legacy_flush``;
2. tool calls of the last response without results: run them concurrently (on resume,
   calls a crash interrupted are run again when replay-safe, else reported interrupted);
3. a successful ``new_context`` result in the batch: seal the window (``new_context``);
4. input the model has not seen (a user message, tool results): dispatch;
5. otherwise the turn is complete: deliver queued input, or finish.

A dispatch assembles the request, estimates it (provider usage of the window's last
response plus a calibrated estimate of what was appended since), asks the policy,
publishes an advisory row together with its claim before sending, and guards the size
of what is finally sent.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from ctxrelay.budget import Capability
from ctxrelay.errors import (
    ConfigError,
    ContextOverflowError,
    ProviderError,
    RequestTooLargeError,
    SessionBusyError,
)
from ctxrelay.runtime._config import SessionConfig, cap_reached, unpriced_cost_cap
from ctxrelay.runtime._legacy import Outcome, legacy_flush
from ctxrelay.runtime._render import WindowView, dump, unseen_rows
from ctxrelay.runtime._repair import boundary_reason, missing_opening
from ctxrelay.runtime._stop import (
    INPUT_KINDS,
    STOP_KEY,
    StoppedStep,
    interrupted_step,
    pending_calls,
    stopped_step,
)
from ctxrelay.runtime._tools import Call, Refusal, result_row, run_calls
from ctxrelay.runtime._totals import Totals, usage_of
from ctxrelay.runtime.cost import Pricer, default_pricer
from ctxrelay.runtime.dispatch import DispatchTarget, dispatch_step
from ctxrelay.runtime.estimate import (
    BytesPerTokenEstimator,
    message_bytes,
    system_bytes,
    tools_bytes,
)
from ctxrelay.runtime.events import (
    RESUMED_AFTER_STOP,
    DispatchEvent,
    EndEvent,
    Event,
    EventSink,
    NoticeEvent,
    PauseEvent,
    ResponseEvent,
    RolloverEvent,
    StartEvent,
    ToolEvent,
)
from ctxrelay.runtime.model import (
    Message,
    ModelProvider,
    ModelRequest,
    ModelResponse,
    TextBlock,
    Usage,
)
from ctxrelay.runtime.plan import (
    LastResponse,
    WindowState,
    capability_for,
    estimate_request,
    guard_request,
)
from ctxrelay.runtime.tools import ToolContext, ToolResult, ToolSet, approve_all, builtin_tools
from ctxrelay.runtime.windows import (
    seal_window,
    window_opening,
)
from ctxrelay.store import NewRow, Row, SealReason, Store, WindowInfo

__all__ = ["RunResult", "Runtime", "Session"]


@dataclass(frozen=True, slots=True)
class RunResult:
    """How a run ended. ``status``: ``done``, ``paused``, ``stopped``. ``reason`` says
    why a session paused (``max_turns``, ``max_cost``, ``limit``, ``too_large``,
    ``provider_error``); ``message`` is one sentence for the user."""

    session_id: str
    status: str
    reason: str | None
    windows: int
    turns: int
    cost_usd: float
    usage: Usage
    message: str | None = None


_Outcome = Outcome


class Session:
    """A running (or resumable) session. Create one with :meth:`Runtime.start` or
    :meth:`Runtime.open`; drive it with ``await session.run()``."""

    def __init__(
        self,
        runtime: Runtime,
        session_id: str,
        config: SessionConfig,
        *,
        resumed: bool,
    ) -> None:
        self._rt = runtime
        self._store = runtime.store
        self._provider = runtime.provider
        self._tools = runtime.tools
        self.id = session_id
        self.config = config
        self._pricer = runtime.pricer or default_pricer(config.prices)
        self._resumed = resumed
        self._queue: collections.deque[str] = collections.deque()
        self._stop = False
        self._estimator = BytesPerTokenEstimator()
        self._window: WindowInfo | None = None
        self._view = WindowView()
        self._fixed_bytes: dict[tuple[str, ...], int] = {}
        self._fresh_calls: set[str] = set()
        self._totals = Totals()
        self._message: str | None = None

    # -- control ---------------------------------------------------------------------

    def enqueue(self, text: str) -> None:
        """Queue user input: delivered after the current turn (in whichever window is
        open then). The queue lives in memory only: a restart never resurrects it."""
        if not text.strip():
            raise ConfigError("queued input must not be empty")
        self._queue.append(text)

    def stop(self) -> None:
        """Stop cleanly before the next dispatch: the running step finishes, the tool
        calls of its response included (see :mod:`ctxrelay.runtime._stop`)."""
        self._stop = True

    @property
    def _rows(self) -> Sequence[Row]:
        return self._view.rows

    @property
    def window(self) -> WindowInfo:
        assert self._window is not None
        return self._window

    # -- run -------------------------------------------------------------------------

    async def run(self, text: str | None = None) -> RunResult:
        """Run until the task is done, a cap pauses it, or it is stopped. ``text`` is a
        new user message appended first (for example when resuming)."""
        with self._store.dispatch_lock(self.id):
            self._load()
            stored = self._store.get_session(self.id).metadata
            task = stored.get("task")
            if self.window.index == 1 and not self._rows and isinstance(task, str):
                self._append([NewRow("user", task, {"task": True})])
            if text is not None and self.window.index > 1 and not self._rows:
                self._repair_opening()  # e.g. after `ctxrelay sessions reset`
            if text is not None:
                if not text.strip():
                    raise ConfigError("the message must not be empty")
                self._append([NewRow("user", text)])
            self._store.update_session(
                self.id,
                status="running",
                metadata={"config": self.config.to_json(), "pause_reason": None},
            )
            self._emit(
                StartEvent.under(
                    self.id,
                    self.window.index,
                    self._resumed,
                    self.config.budget,
                    self._provider.name,
                )
            )
            self._warn_unenforceable_cost_cap()
            self._report_stop(StoppedStep.from_json(stored.get(STOP_KEY)))
            try:
                status, reason = await self._loop()
            except ProviderError as exc:
                status, reason, self._message = "paused", "provider_error", str(exc)
            except (asyncio.CancelledError, KeyboardInterrupt):
                # A second Ctrl-C: answer the calls it cut short before anything else.
                step, answers = interrupted_step(self._view.after_reply())
                self._append(answers)
                self._keep_stop(step)
                self._finish("stopped", "interrupted")
                raise
            if status == "stopped":
                self._keep_stop(stopped_step(self._view.after_reply()))
            return self._finish(status, reason)

    def _keep_stop(self, step: StoppedStep) -> None:
        self._store.update_session(self.id, metadata={STOP_KEY: step.to_json()})

    def _report_stop(self, step: StoppedStep | None) -> None:
        """Say how the last run, stopped by the user, left its step (once)."""
        if step is not None:
            self._emit(NoticeEvent(RESUMED_AFTER_STOP, step.sentence()))
            self._store.update_session(self.id, metadata={STOP_KEY: None})

    def _finish(self, status: str, reason: str | None) -> RunResult:
        self._store.update_session(
            self.id,
            status=status,
            metadata={"pause_reason": reason, **self._totals.to_json()},
        )
        if status == "paused" and reason is not None:
            self._emit(PauseEvent(reason, self._message or reason))
        self._emit(
            EndEvent(
                self.id,
                status,
                reason,
                self.window.index,
                self._totals.turns,
                round(self._totals.cost_usd, 10),
            )
        )
        return RunResult(
            self.id,
            status,
            reason,
            self.window.index,
            self._totals.turns,
            self._totals.cost_usd,
            self._totals.usage,
            self._message,
        )

    def _emit(self, event: Event) -> None:
        if self._rt.on_event is not None:
            self._rt.on_event(event)

    # -- state -----------------------------------------------------------------------

    def _load(self) -> None:
        """Re-derive everything from the store: window, rows, totals, calibration."""
        self._window = self._store.current_window(self.id)
        self._view = WindowView(self._store.rows(self.id, window_id=self._window.id))
        self._totals = Totals()
        last: Row | None = None
        for row in self._store.rows(self.id):
            if row.kind != "assistant":
                continue
            cost = row.metadata.get("cost_usd", 0.0)
            self._totals.add(row.window_id, usage_of(row.metadata), float(cost) if cost else 0.0)
            if "request_bytes" in row.metadata:
                last = row
        if last is not None:
            self._estimator.observe(
                int(last.metadata["request_bytes"]), int(last.metadata["context_tokens"])
            )

    def _append(self, rows: Sequence[NewRow]) -> list[Row]:
        added = self._store.append(self.id, self.window.id, rows)
        self._view.extend(added)
        return added

    @property
    def _history_available(self) -> bool:
        return "session_history" in self._tools

    def _capability(self) -> Capability:
        return capability_for(
            self.config.new_context,
            new_context_tool="new_context" in self._tools,
            session_history=self._history_available,
        )

    def _offer_new_context(self) -> bool:
        return not self.config.budget.off and self._capability() is not Capability.DEGRADED

    # -- the loop ----------------------------------------------------------------------

    async def _loop(self) -> _Outcome:
        while True:
            view = self._view
            # A stop waits for the step's tool calls: none is left to a resume to guess at.
            if self._stop and not pending_calls(view.after_reply()):
                return "stopped", "stop"
            if view.flush_at is not None:
                out = await legacy_flush(self, view.flush_at)
                if out is not None:
                    return out
                continue
            if view.boundary is not None:
                out = self._repair_boundary(view.boundary)
                if out is not None:
                    return out
                continue
            if self.window.index > 1 and not view.rows:
                self._repair_opening()
                continue
            after = view.after_reply()
            results = {
                str(r.metadata.get("tool_call_id")): r for r in after if r.kind == "tool_result"
            }
            pending = pending_calls(after)
            if pending:
                await self._run_tools(pending)
                continue
            if any(
                r.metadata.get("new_context") and not r.metadata.get("is_error")
                for r in results.values()
            ):
                out = self._rollover_or_pause("new_context")
                if out is not None:
                    return out
                continue
            if any(r.kind in INPUT_KINDS for r in after):
                out = await self._dispatch()
                if out is not None:
                    return out
                continue
            if self._queue:
                self._append([NewRow("user", self._queue.popleft(), {"queued": True})])
                continue
            return "done", None

    # -- dispatch ----------------------------------------------------------------------

    def _request(
        self,
        *,
        offer: bool,
        view: WindowView | None = None,
        only: Sequence[str] | None = None,
        before_advisories: bool = False,
    ) -> tuple[ModelRequest, int]:
        """The request for the window (or ``view``) and its size (``request_bytes``),
        rendered incrementally: only the newest messages are rendered again. ``only``
        limits the tools offered to those names."""
        cfg = self.config
        view = self._view if view is None else view
        messages, size = view.messages(without_pending_advisories=before_advisories)
        if only is not None:
            tools = [s for s in self._tools.specs() if s.name in only]
        else:
            tools = self._tools.specs(exclude=() if offer else ("new_context",))
        key = tuple(t.name for t in tools)
        fixed = self._fixed_bytes.get(key)
        if fixed is None:
            fixed = self._fixed_bytes[key] = system_bytes(cfg.system) + tools_bytes(tools)
        reserve = cfg.budget.output_reserve
        max_tokens = cfg.max_output_tokens or (reserve if reserve > 0 else 4096)
        request = ModelRequest(
            system=cfg.system,
            messages=messages,
            tools=tools,
            max_tokens=max_tokens,
            metadata={
                "session_id": self.id,
                "window_id": self.window.id,
                "window_index": self.window.index,
                "response_index": self._totals.turns,
                "usable_limit": cfg.budget.usable_limit,
            },
        )
        return request, fixed + size

    def _estimate(self, now: int, view: WindowView | None = None) -> int:
        """Tokens of a request of ``now`` bytes (see :func:`estimate_request`)."""
        view = self._view if view is None else view
        last = view.rows[view.last_assistant] if view.last_assistant >= 0 else None
        reply = LastResponse.from_metadata(last.metadata) if last is not None else None
        return estimate_request(now, reply, self._estimator.estimate_bytes)

    def _pause(self, reason: str, message: str) -> _Outcome:
        self._message = message
        return "paused", reason

    def _pause_too_large(self) -> _Outcome:
        return "paused", "too_large"

    def _warn_unenforceable_cost_cap(self) -> None:
        """A cost cap on a model without prices (a local server, the scripted model)
        would silently never pause: say so once, at the start of the run."""
        message = unpriced_cost_cap(self.config, self._provider.name, self._pricer)
        if message is not None:
            self._emit(NoticeEvent("max_cost_unpriced", message))

    def _controls(self) -> _Outcome | None:
        reached = cap_reached(self.config, turns=self._totals.turns, cost_usd=self._totals.cost_usd)
        return None if reached is None else self._pause(*reached)

    async def _dispatch(self) -> _Outcome | None:
        capped = self._controls()
        if capped is not None:
            return capped
        cfg = self.config
        budget = cfg.budget
        window = self.window
        capability = self._capability()
        offer = self._offer_new_context()
        # Evaluate the request as it was before any advisory of this dispatch: a retry
        # after a crash (the advisory row already published) decides exactly as the
        # first attempt did, so a restart never changes the window's course.
        pending = any(r.kind == "warning" for r in self._view.after_reply())
        request, sent = self._request(offer=offer, before_advisories=pending)
        tokens = final = self._estimate(sent)
        if pending:
            request, sent = self._request(offer=offer)
            final = self._estimate(sent)
        # Claims derive from the durable advisory rows of the window (this process
        # holds the dispatch lock, so the rows it has are the rows the store has).
        state = WindowState(
            window.id, window.index, frozenset(self._view.claims), self._view.max_context
        )
        target = DispatchTarget(
            self._store, self.id, self._emit, cfg.notes_file, self._estimator.estimate
        )
        step = dispatch_step(
            budget,
            tokens,
            target,
            state,
            capability,
            history_available=self._history_available,
            active=cfg.active,
        )
        if step.action == "rollover":
            reason = step.reason or "forced"
            opening = self._opening(reason)
            if opening is None:
                # Not even a fresh window holds it: the request is rejected before any
                # provider call and nothing is sealed, so the event says block, not
                # rollover.
                self._emit(DispatchEvent(window.index, tokens, "block", None, reason="too_large"))
                return self._pause_too_large()
            self._emit(DispatchEvent(window.index, tokens, "rollover", None, reason=reason))
            return self._rollover_or_pause(reason, opening)
        if step.action == "block":
            return self._pause("limit", step.plan.message or "")
        if step.published is not None:
            self._view.extend([step.published])
            request, sent = self._request(offer=offer)
            final = self._estimate(sent)
        guard = guard_request(budget, final, answered=self._view.last_assistant >= 0)
        if guard == "pause":
            # The advisory (or anything assembled after the evaluation) pushed the
            # request over, in a window with no response yet: another window would
            # only be like it, so pause instead of rolling over in a loop.
            return self._pause("too_large", str(RequestTooLargeError(final, budget.usable_limit)))
        if guard == "rollover":  # never an oversized dispatch
            return self._rollover_or_pause("emergency")
        try:
            response = await self._complete(request, sent, final)
        except ContextOverflowError as exc:
            if not any(r.kind == "assistant" for r in self._rows):
                return self._pause("too_large", str(exc))
            return self._rollover_or_pause("emergency")
        self._record(sent, response, final)
        return None

    async def _complete(self, request: ModelRequest, sent: int, tokens: int) -> ModelResponse:
        """Send ``request`` (``sent`` bytes, estimated at ``tokens``), streaming its text."""
        request = replace(
            request,
            metadata={**request.metadata, "estimated_tokens": tokens, "request_bytes": sent},
        )
        return await self._provider.complete(request, on_text=self._rt.on_text)

    def _record(self, sent: int, response: ModelResponse, estimated: int) -> None:
        usage = response.usage
        cost = self._pricer.cost_usd(self._provider.name, usage)
        reply = Message(
            "assistant",
            (TextBlock(response.text),) if response.text else (),
            tuple(response.tool_calls),
        )
        meta: dict[str, Any] = {
            "usage": {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_creation_input_tokens": usage.cache_creation_input_tokens,
                "cache_read_input_tokens": usage.cache_read_input_tokens,
            },
            "context_tokens": usage.context_tokens,
            "output_tokens": usage.output_tokens,
            "request_bytes": sent,
            "message_bytes": message_bytes(reply),
            "estimated_tokens": estimated,
            "response_index": self._totals.turns,
            "model": response.model,
            "stop_reason": response.stop_reason,
            "cost_usd": cost,
        }
        rows = [NewRow("assistant", response.text, meta)]
        rows += [
            NewRow(
                "tool_call",
                dump(dict(call.input)),
                {"id": call.id, "name": call.name, "input": dict(call.input)},
            )
            for call in response.tool_calls
        ]
        self._append(rows)
        self._fresh_calls = {c.id for c in response.tool_calls}
        self._estimator.observe(sent, usage.context_tokens)
        self._totals.add(self.window.id, usage, cost)
        self._emit(
            ResponseEvent(
                self.window.index,
                response.text,
                [c.name for c in response.tool_calls],
                usage.context_tokens,
                usage.output_tokens,
                cost,
                self._totals.cost_usd,
            )
        )

    # -- tools -------------------------------------------------------------------------

    async def _run_tools(self, pending: Sequence[Row], *, refuse: Refusal | None = None) -> None:
        window = self.window
        cfg = self.config

        def context(call: Call) -> ToolContext:
            return ToolContext(
                workspace=cfg.workspace,
                store=self._store,
                session_id=self.id,
                window_id=window.id,
                window_index=window.index,
                call_id=call.id,
                notes_file=cfg.notes_file,
                confirm=self._rt.confirm,
            )

        def record(call: Call, result: ToolResult) -> None:
            row = result_row(call, result)
            self._append([row])
            first = result.content.splitlines()[0] if result.content else ""
            event = ToolEvent(
                window.index, call.name, call.id, result.is_error, first[:200], row.metadata
            )
            self._emit(event)

        await run_calls(
            pending,
            tools=self._tools,
            context=context,
            fresh=self._fresh_calls,
            offer_new_context=self._offer_new_context(),
            record=record,
            refuse=refuse,
        )
        self._fresh_calls.clear()

    # -- windows -----------------------------------------------------------------------

    def _fake_rows(self, rows: Sequence[NewRow]) -> list[Row]:
        return [Row(0, self.id, "0" * 32, 0, r.kind, r.text, r.metadata, 0.0) for r in rows]

    def _rollover(self, reason: SealReason, opening: tuple[NewRow, NewRow] | None = None) -> bool:
        """Seal the open window and open the next with its lead-in and the triggering
        message, in one store transaction. ``False`` (nothing changed) when even a
        fresh window could not hold the first request. ``opening`` is what
        :meth:`_opening` already built for this reason, if the caller asked first."""
        opening = opening or self._opening(reason)
        if opening is None:
            return False
        window = self.window
        new = seal_window(
            self._store,
            self.id,
            window,
            reason,
            opening=opening,
            usable_limit=self.config.budget.usable_limit,
        )
        self._window = new
        self._view = WindowView(self._store.rows(self.id, window_id=new.id))
        # The totals so far, per window and session, at each window boundary (every
        # response row carries its own cost; the end of a run writes them again).
        self._store.update_session(self.id, metadata=self._totals.to_json())
        notes_bytes = opening[0].metadata.get("notes_bytes")
        self._emit(
            RolloverEvent(
                window.index, new.index, reason, int(notes_bytes) if notes_bytes else None
            )
        )
        return True

    def _rollover_or_pause(
        self, reason: SealReason, opening: tuple[NewRow, NewRow] | None = None
    ) -> _Outcome | None:
        """Roll over (``None``: the loop continues in the new window), or pause
        ``too_large`` when even a fresh window could not hold the first request."""
        return None if self._rollover(reason, opening) else self._pause_too_large()

    def _opening(self, reason: SealReason) -> tuple[NewRow, NewRow] | None:
        """The lead-in and triggering message of the window a rollover would open, or
        ``None`` (with the message set) when even that fresh window could not hold its
        first request."""
        cfg = self.config

        def measure(opening: tuple[NewRow, NewRow]) -> int:
            fresh = WindowView(self._fake_rows(list(opening)))
            _, size = self._request(offer=self._offer_new_context(), view=fresh)
            return self._estimate(size, fresh)

        try:
            return window_opening(
                self.window,
                reason,
                workspace=cfg.workspace,
                notes_file=cfg.notes_file,
                history_available=self._history_available,
                usable_limit=cfg.budget.usable_limit,
                unseen=unseen_rows(self._rows),
                measure=measure,
            )
        except RequestTooLargeError as exc:
            self._message = str(exc)
            return None

    def _repair_boundary(self, boundary: Row) -> _Outcome | None:
        """An older history appended a boundary without sealing (a torn batch): finish
        that one rollover with the boundary's reason, never a second one."""
        self._view = WindowView([r for r in self._rows if r.seq < boundary.seq])
        return self._rollover_or_pause(boundary_reason(boundary))

    def _repair_opening(self) -> None:
        """An older history sealed a window without opening the next one's rows: append
        the lead-in and a continuation so the window can proceed (no new rollover)."""
        cfg = self.config
        self._append(
            missing_opening(
                self._store.windows(self.id),
                self.window.index,
                workspace=cfg.workspace,
                notes_file=cfg.notes_file,
                history_available=self._history_available,
                usable_limit=cfg.budget.usable_limit,
            )
        )


class Runtime:
    """The runtime's entry: a store, a model provider, a tool set and an event sink
    (and optionally ``on_text`` for streamed text, ``confirm`` for actions with effects).

    ``start`` creates a session; ``open`` loads one from the store. A session opened
    from the store is paused until its ``run`` is awaited: a restart never continues by
    itself and never resurrects queued input."""

    def __init__(
        self,
        store: Store,
        provider: ModelProvider,
        *,
        tools: ToolSet | None = None,
        pricer: Pricer | None = None,
        on_event: EventSink | None = None,
        confirm: Callable[[str], Awaitable[bool]] = approve_all,
        on_text: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.provider = provider
        self.tools = tools if tools is not None else builtin_tools()
        self.pricer = pricer
        self.on_event = on_event
        self.confirm = confirm
        self.on_text = on_text
        """Receives the model's text as it streams (a live display), if set."""

    def start(self, task: str, config: SessionConfig, *, session_id: str | None = None) -> Session:
        if not isinstance(task, str) or not task.strip():
            raise ConfigError("the task must be a non-empty message")
        workspace = config.workspace.resolve()
        if not workspace.is_dir():
            raise ConfigError(f"the workspace {str(workspace)!r} is not a directory")
        config = replace(config, workspace=workspace)
        info = self.store.create_session(
            metadata={
                "config": config.to_json(),
                "model": self.provider.name,
                "task": task,
                "runtime": "ctxrelay",
            },
            session_id=session_id,
        )
        self.store.update_session(info.id, status="paused", metadata={"pause_reason": "new"})
        # The task row is appended by the session's first run (from the metadata), so a
        # crash between creating the session and appending it cannot lose the task.
        return Session(self, info.id, config, resumed=False)

    def open(
        self,
        session_id: str,
        *,
        max_turns: int | Literal["keep"] | None = "keep",
        max_cost: float | Literal["keep"] | None = "keep",
    ) -> Session:
        """Load a stored session (paused). Raise or lower its caps for this and later
        runs; ``None`` removes a cap."""
        info = self.store.get_session(session_id)
        raw = info.metadata.get("config")
        if not isinstance(raw, Mapping):
            raise ConfigError(f"session {session_id!r} was not created by the ctxrelay runtime")
        config = SessionConfig.from_json(raw)
        if max_turns != "keep":
            config = replace(config, max_turns=max_turns)
        if max_cost != "keep":
            config = replace(config, max_cost=max_cost)
        if info.status == "running":
            # "running" with nobody holding its dispatch lock: the process that ran it
            # died. It stays paused until someone runs it again.
            try:
                with self.store.dispatch_lock(session_id):
                    self.store.update_session(
                        session_id, status="paused", metadata={"pause_reason": "interrupted"}
                    )
            except SessionBusyError:
                pass  # another worker is running it right now
        return Session(self, session_id, config, resumed=True)
