"""Shared helpers of the runtime tests: a session on a real SQLite store driven by the
scripted model, with its events recorded."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxrelay.budget import Budget
from ctxrelay.runtime import RunResult, Runtime, SessionConfig
from ctxrelay.runtime.events import DispatchEvent, Event
from ctxrelay.runtime.providers.scripted import ScriptedProvider, load_steps
from ctxrelay.runtime.tools import ToolSet, builtin_tools
from ctxrelay.store import NewRow, Row, Store

SMALL = Budget(limit=10_000, output_reserve=2_000, threshold=60)
"""usable 8,000 · target 6,000 · warning 5,000."""


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "input": args}


@dataclass
class Harness:
    store: Store
    workspace: Path
    log: Path
    events: list[Event] = field(default_factory=list)

    def runtime(self, steps: Sequence[Any], *, tools: ToolSet | None = None) -> Runtime:
        provider = ScriptedProvider(load_steps(steps), name="scripted:test", log=self.log)
        return Runtime(
            self.store,
            provider,
            tools=tools if tools is not None else builtin_tools(),
            on_event=self.events.append,
        )

    def config(self, budget: Budget = SMALL, **kwargs: Any) -> SessionConfig:
        return SessionConfig(budget=budget, workspace=self.workspace, **kwargs)

    def run(
        self,
        steps: Sequence[Any],
        task: str = "do the task",
        *,
        budget: Budget = SMALL,
        tools: ToolSet | None = None,
        **kwargs: Any,
    ) -> RunResult:
        runtime = self.runtime(steps, tools=tools)
        session = runtime.start(task, self.config(budget, **kwargs))
        return asyncio.run(session.run())

    def resume(
        self,
        steps: Sequence[Any],
        session_id: str,
        text: str | None = None,
        *,
        tools: ToolSet | None = None,
        **caps: Any,
    ) -> RunResult:
        session = self.runtime(steps, tools=tools).open(session_id, **caps)
        return asyncio.run(session.run(text))

    # -- reading back -------------------------------------------------------------

    def rows(self, session_id: str) -> list[Row]:
        return self.store.rows(session_id)

    def kinds(self, session_id: str) -> list[str]:
        return [r.kind for r in self.rows(session_id)]

    def seals(self, session_id: str) -> list[str | None]:
        return [w.seal_reason for w in self.store.windows(session_id)]

    def dispatches(self) -> list[DispatchEvent]:
        return [e for e in self.events if isinstance(e, DispatchEvent)]

    def decisions(self) -> list[tuple[int, str, str | None]]:
        return [(e.window, e.decision, e.stage) for e in self.dispatches()]

    def received(self) -> list[dict[str, Any]]:
        """What the scripted model received, one entry per request."""
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def advisories(self, session_id: str) -> list[tuple[int, str]]:
        index = {w.id: w.index for w in self.store.windows(session_id)}
        return [
            (index[r.window_id], str(r.metadata["stage"]))
            for r in self.rows(session_id)
            if r.kind == "warning"
        ]


def stored_session(harness: Harness, rows: Sequence[NewRow]) -> tuple[str, str]:
    """(session id, window id) of a session an older version stored with ``rows``."""
    config = harness.config().to_json()
    info = harness.store.create_session(metadata={"config": config, "model": "scripted:old"})
    w = harness.store.current_window(info.id)
    harness.store.append(info.id, w.id, rows)
    return info.id, w.id
