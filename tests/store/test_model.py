"""Model-based test: random sequences of store operations on two handles of one SQLite
store must match a plain in-memory model of the Protocol's promises."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from ctxrelay.errors import StaleWindowError
from ctxrelay.store import NewRow, SealReason, Store, open_store

KINDS = st.sampled_from(["user", "assistant", "tool_call", "tool_result"])
TEXTS = st.one_of(st.none(), st.text(max_size=40))
ROWS = st.lists(st.tuples(KINDS, TEXTS), min_size=1, max_size=4)


@dataclass
class ModelWindow:
    id: str
    rows: list[tuple[str, str | None]] = field(default_factory=list)
    claims: set[str] = field(default_factory=set)
    seal: str | None = None


class StoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="ctxrelay-model-"))
        self.handles: list[Store] = [open_store(self.dir / "s.db") for _ in range(2)]
        self.sessions: dict[str, list[ModelWindow]] = {}

    def teardown(self) -> None:
        for handle in self.handles:
            handle.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _store(self, which: int) -> Store:
        return self.handles[which % 2]

    @rule(which=st.integers(0, 1))
    def create(self, which: int) -> None:
        session = self._store(which).create_session()
        window = self._store(which).current_window(session.id)
        self.sessions[session.id] = [ModelWindow(window.id)]

    @precondition(lambda self: self.sessions)
    @rule(data=st.data(), rows=ROWS, which=st.integers(0, 1))
    def append(self, data: st.DataObject, rows: list[tuple[str, str | None]], which: int) -> None:
        sid = data.draw(st.sampled_from(list(self.sessions)))
        windows = self.sessions[sid]
        target = data.draw(st.sampled_from(windows))
        new = [NewRow(kind, text) for kind, text in rows]  # type: ignore[arg-type]
        if target.seal is not None:
            with pytest.raises(StaleWindowError):
                self._store(which).append(sid, target.id, new)
            return
        self._store(which).append(sid, target.id, new)
        target.rows.extend(rows)

    @precondition(lambda self: self.sessions)
    @rule(data=st.data(), stage=st.sampled_from(["warning", "handoff"]), which=st.integers(0, 1))
    def advise(self, data: st.DataObject, stage: str, which: int) -> None:
        sid = data.draw(st.sampled_from(list(self.sessions)))
        target = self.sessions[sid][-1]
        got = self._store(which).append_advisory(sid, target.id, stage, NewRow("warning", stage))
        if stage in target.claims:
            assert got is None
        else:
            assert got is not None
            target.claims.add(stage)
            target.rows.append(("warning", stage))

    @precondition(lambda self: self.sessions)
    @rule(
        data=st.data(),
        reason=st.sampled_from(["new_context", "forced", "emergency"]),
        opening=st.lists(TEXTS, max_size=2),
        stale=st.booleans(),
        which=st.integers(0, 1),
    )
    def rollover(
        self,
        data: st.DataObject,
        reason: SealReason,
        opening: list[str | None],
        stale: bool,
        which: int,
    ) -> None:
        sid = data.draw(st.sampled_from(list(self.sessions)))
        windows = self.sessions[sid]
        sealed = [w for w in windows if w.seal is not None]
        target = sealed[0] if stale and sealed else windows[-1]
        rows = [NewRow("lead_in", text) for text in opening]
        if target.seal is not None:
            with pytest.raises(StaleWindowError):
                self._store(which).rollover(
                    sid,
                    target.id,
                    reason,
                    boundary=NewRow("boundary"),
                    opening=rows,
                )
            return
        new = self._store(which).rollover(
            sid,
            target.id,
            reason,
            boundary=NewRow("boundary"),
            opening=rows,
        )
        target.rows.append(("boundary", None))
        target.seal = reason
        windows.append(ModelWindow(new.id, [("lead_in", text) for text in opening]))

    @precondition(lambda self: self.sessions)
    @rule(data=st.data(), which=st.integers(0, 1))
    def reset(self, data: st.DataObject, which: int) -> None:
        sid = data.draw(st.sampled_from(list(self.sessions)))
        new = self._store(which).reset(sid)
        self.sessions[sid][-1].seal = "manual_reset"
        self.sessions[sid].append(ModelWindow(new.id))

    @invariant()
    def matches_the_model(self) -> None:
        store = self.handles[0]
        for sid, windows in self.sessions.items():
            got = store.windows(sid)
            assert [w.id for w in got] == [w.id for w in windows]
            assert [w.seal_reason for w in got] == [w.seal for w in windows]
            assert [w.index for w in got] == list(range(1, len(windows) + 1))
            rows = store.rows(sid)
            assert [r.seq for r in rows] == list(range(1, len(rows) + 1))
            for window in windows:
                mine = [(r.kind, r.text) for r in rows if r.window_id == window.id]
                assert mine == window.rows
                assert store.claims(window.id) == window.claims
            floor = max((i for i, w in enumerate(windows) if w.seal == "manual_reset"), default=-1)
            visible = [w.index for w in store.history_windows(sid)]
            assert visible == list(range(floor + 2, len(windows) + 1))


StoreMachine.TestCase.settings = settings(
    max_examples=30,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestStoreModel = StoreMachine.TestCase
