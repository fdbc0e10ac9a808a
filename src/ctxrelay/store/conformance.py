"""The conformance kit every :class:`ctxrelay.store.Store` backend must pass.

It needs no test runner: :func:`run_store_conformance` runs every contract with plain
``assert`` and raises :class:`StoreConformanceError` naming the first contract that
fails. Give it a function that opens a handle on a database by name, creating the
database empty on first use; each contract gets a fresh name (lowercase letters and
digits, starting with a letter) and may open several handles on it, to play several
workers or to reopen after ``close``::

    from ctxrelay.store.conformance import run_store_conformance

    ran = run_store_conformance(lambda name: MyStore(f"/tmp/conformance/{name}.db"))

Under pytest, one test per contract reports each on its own line::

    @pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name)
    def test_my_store(contract: Contract, tmp_path: Path) -> None:
        run_contract(contract, lambda name: MyStore(tmp_path / f"{name}.db"))

Each contract checks one promise of the Protocol's docstrings.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from ctxrelay.errors import (
    ConfigError,
    CtxrelayError,
    SessionInUseError,
    SessionNotFoundError,
    StaleWindowError,
    StoreError,
    WindowNotFoundError,
)
from ctxrelay.store._lease import hold_lease
from ctxrelay.store._protocol import (
    HISTORY_LINE_MAX_BYTES,
    HISTORY_RESULT_MAX_BYTES,
    HISTORY_ROWS_MAX,
    HISTORY_SCAN_MAX_BYTES,
    SEAL_REASONS,
    NewRow,
    Store,
)

__all__ = [
    "CONTRACTS",
    "Contract",
    "OpenStore",
    "StoreConformanceError",
    "StoreFactory",
    "run_contract",
    "run_store_conformance",
]

E = TypeVar("E", bound=BaseException)

OpenStore = Callable[[str], Store]
"""Opens one more handle on the database called ``name``, creating it empty first if
it does not exist yet."""

StoreFactory = Callable[[], Store]
"""Opens one more handle on one contract's database."""


class StoreConformanceError(CtxrelayError, AssertionError):
    """A backend broke a contract; the message names it and says what was wrong."""

    def __init__(self, contract: str, detail: str) -> None:
        self.contract = contract
        super().__init__(f"store contract {contract!r} failed: {detail}")


@dataclass(frozen=True, slots=True)
class Contract:
    """One promise of the ``Store`` Protocol and the check of it."""

    name: str
    doc: str
    check: Callable[..., None]


CONTRACTS: list[Contract] = []
"""Every contract, in the order they run (filled below)."""


def _contract(check: Callable[..., None]) -> Callable[..., None]:
    doc = inspect.getdoc(check) or check.__name__.replace("_", " ")
    CONTRACTS.append(Contract(check.__name__, doc, check))
    return check


@contextlib.contextmanager
def _raises(kind: type[BaseException], match: str | None = None) -> Iterator[None]:
    """Like ``pytest.raises``: the block must raise ``kind`` (matching ``match``)."""
    try:
        yield
    except kind as exc:
        if match is not None and not re.search(match, str(exc)):
            raise AssertionError(f"{kind.__name__} {str(exc)!r} does not match {match!r}") from exc
        return
    raise AssertionError(f"expected {kind.__name__}, nothing was raised")


def _raised(kind: type[E], call: Callable[[], object], what: str) -> E:
    """The ``kind`` exception ``call`` raises (``what`` says what must not succeed)."""
    try:
        call()
    except kind as exc:
        return exc
    raise AssertionError(f"{what} succeeded")


def _past(moment: float) -> None:
    """Return once the clock has passed ``moment`` (a row's or session's time)."""
    while time.time() <= moment:
        time.sleep(0.0005)


def _texts(store: Store, session_id: str, window_id: str | None = None) -> list[str | None]:
    return [r.text for r in store.rows(session_id, window_id=window_id)]


def run_contract(contract: Contract, open_store: OpenStore) -> None:
    """Run one contract on a fresh database; raise :class:`StoreConformanceError` if the
    backend breaks it. Every handle it opened is closed."""
    name = "c" + uuid.uuid4().hex[:20]
    handles: list[Store] = []

    def factory() -> Store:
        handle = open_store(name)
        handles.append(handle)
        return handle

    wanted = inspect.signature(contract.check).parameters
    args: dict[str, Any] = {}
    if "store" in wanted:
        args["store"] = factory()
    if "other" in wanted:
        args["other"] = factory()
    if "store_factory" in wanted:
        args["store_factory"] = factory
    try:
        contract.check(**args)
    except AssertionError as exc:
        raise StoreConformanceError(contract.name, str(exc) or "an assertion failed") from exc
    finally:
        for handle in handles:
            with contextlib.suppress(Exception):
                handle.close()


def run_store_conformance(open_store: OpenStore, *, only: Iterable[str] | None = None) -> list[str]:
    """Run every contract (or the ``only`` ones, by name) against the backend that
    ``open_store`` opens, each on a fresh database; return the names run, in order.

    Raises :class:`StoreConformanceError` at the first contract broken."""
    names = None if only is None else set(only)
    if names is not None:
        unknown = names - {c.name for c in CONTRACTS}
        if unknown:
            raise ConfigError(f"no store contract named {', '.join(sorted(unknown))}")
    ran: list[str] = []
    for contract in CONTRACTS:
        if names is None or contract.name in names:
            run_contract(contract, open_store)
            ran.append(contract.name)
    return ran


# ---- sessions ---------------------------------------------------------------------


@_contract
def is_a_store(store: Store) -> None:
    assert isinstance(store, Store)


@_contract
def create_session_opens_first_window(store: Store) -> None:
    session = store.create_session(metadata={"model": "m", "n": [1, 2]})
    assert session.status == "running"
    assert session.metadata == {"model": "m", "n": [1, 2]}
    assert store.get_session(session.id) == session
    (window,) = store.windows(session.id)
    assert window.index == 1
    assert window.session_id == session.id
    assert not window.sealed
    assert window.seal_reason is None
    assert store.current_window(session.id) == window
    assert store.claims(window.id) == frozenset()
    assert store.rows(session.id) == []


@_contract
def explicit_session_id_and_duplicates(store: Store) -> None:
    session = store.create_session(session_id="chosen-id")
    assert session.id == "chosen-id"
    with _raises(StoreError):
        store.create_session(session_id="chosen-id")
    assert len(store.windows("chosen-id")) == 1


@_contract
def unknown_session_raises(store: Store) -> None:
    for call in (
        lambda: store.get_session("nope"),
        lambda: store.windows("nope"),
        lambda: store.current_window("nope"),
        lambda: store.rows("nope"),
        lambda: store.update_session("nope", status="done"),
        lambda: store.history_windows("nope"),
        lambda: store.history_search("nope", "x"),
        lambda: store.history_read("nope", 1),
        lambda: store.reset("nope"),
    ):
        with _raises(SessionNotFoundError):
            call()


@_contract
def list_sessions_newest_first(store: Store) -> None:
    made = []
    for _ in range(4):
        session = store.create_session()
        made.append(session.id)
        _past(session.created_at)  # the next session is created strictly later
    assert [s.id for s in store.list_sessions()][:4] == made[::-1]
    assert [s.id for s in store.list_sessions(limit=2)] == made[:1:-1]


@_contract
def update_session_merges_metadata(store: Store) -> None:
    session = store.create_session(metadata={"a": 1, "b": 2})
    updated = store.update_session(session.id, status="paused", metadata={"b": 3, "c": "é"})
    assert updated.status == "paused"
    assert updated.metadata == {"a": 1, "b": 3, "c": "é"}
    assert store.get_session(session.id) == updated
    again = store.update_session(session.id, metadata={"d": None})
    assert again.status == "paused"
    assert again.metadata == {"a": 1, "b": 3, "c": "é", "d": None}


# ---- rows -------------------------------------------------------------------------


@_contract
def append_orders_rows_and_round_trips_values(store: Store) -> None:
    session = store.create_session()
    window = store.current_window(session.id)
    meta: dict[str, Any] = {"nested": {"list": [1, 2.5, None, True]}, "nul": "a\u0000b"}
    written = store.append(
        session.id,
        window.id,
        [
            NewRow("user", "héllo \u0000 wörld 🌍", meta),
            NewRow("assistant", None, {"tokens": 12}),
            NewRow("tool_call", "", {}),
        ],
    )
    more = store.append(session.id, window.id, [NewRow("tool_result", "ok")])
    read = store.rows(session.id)
    assert read == [*written, *more]
    assert [r.seq for r in read] == sorted({r.seq for r in read})
    assert len({r.id for r in read}) == 4
    assert read[0].text == "héllo \u0000 wörld 🌍"
    assert read[0].metadata == meta
    assert read[1].text is None
    assert read[2].text == ""
    assert all(r.window_id == window.id and r.session_id == session.id for r in read)
    assert all(r.text_bytes is None for r in read)
    assert store.append(session.id, window.id, []) == []


@_contract
def append_is_all_or_nothing(store: Store) -> None:
    session = store.create_session()
    window = store.current_window(session.id)
    store.append(session.id, window.id, [NewRow("user", "kept")])
    bad_kind: Any = "nonsense"
    with _raises(StoreError):
        store.append(session.id, window.id, [NewRow("user", "a"), NewRow(bad_kind, "b")])
    with _raises(StoreError):
        store.append(
            session.id,
            window.id,
            [NewRow("user", "a"), NewRow("user", "b", {"x": object()})],
        )
    for bad in (
        [NewRow("user", "a"), NewRow("user", "b", {"x": float("nan")})],
        [NewRow("user", "a"), NewRow("user", "lone \udc80 surrogate")],
        [NewRow("user", "a"), NewRow("user", "b", {"k": "\ud800"})],
    ):
        with _raises(StoreError):
            store.append(session.id, window.id, bad)
    assert _texts(store, session.id) == ["kept"]
    # Sequence numbers stay dense after failed batches.
    (row,) = store.append(session.id, window.id, [NewRow("user", "next")])
    assert row.seq == store.rows(session.id)[0].seq + 1


@_contract
def rows_filters(store: Store) -> None:
    session = store.create_session()
    first = store.current_window(session.id)
    store.append(session.id, first.id, [NewRow("user", str(i)) for i in range(5)])
    second = store.rollover(session.id, first.id, "forced", boundary=NewRow("boundary"), opening=[])
    store.append(session.id, second.id, [NewRow("user", "w2")])
    assert _texts(store, session.id, second.id) == ["w2"]
    assert _texts(store, session.id, first.id) == ["0", "1", "2", "3", "4", None]
    all_rows = store.rows(session.id)
    after = store.rows(session.id, after_seq=all_rows[2].seq, limit=2)
    assert after == all_rows[3:5]


@_contract
def append_to_sealed_or_foreign_window_is_refused(store: Store) -> None:
    session = store.create_session()
    stranger = store.create_session()
    window = store.current_window(session.id)
    store.rollover(session.id, window.id, "new_context", boundary=NewRow("boundary"), opening=[])
    before = store.rows(session.id)
    with _raises(StaleWindowError):
        store.append(session.id, window.id, [NewRow("user", "late")])
    with _raises(StaleWindowError):
        store.append_advisory(session.id, window.id, "warning", NewRow("warning", "late"))
    with _raises(StaleWindowError):
        store.append(session.id, store.current_window(stranger.id).id, [NewRow("user")])
    with _raises(StaleWindowError):
        store.append(session.id, "no-such-window", [NewRow("user")])
    assert store.rows(session.id) == before
    assert store.rows(stranger.id) == []


# ---- claims -----------------------------------------------------------------------


@_contract
def claim_once_per_window_and_stage(store: Store) -> None:
    session = store.create_session()
    window = store.current_window(session.id)
    row = store.append_advisory(
        session.id, window.id, "warning", NewRow("warning", "w", {"stage": "warning"})
    )
    assert row is not None
    assert row.kind == "warning"
    assert store.append_advisory(session.id, window.id, "warning", NewRow("warning", "x")) is None
    handoff = store.append_advisory(
        session.id, window.id, "handoff", NewRow("warning", "h", {"handoff": True})
    )
    assert handoff is not None
    assert store.claims(window.id) == {"warning", "handoff"}
    assert _texts(store, session.id) == ["w", "h"]  # the refused claim wrote nothing
    fresh = store.rollover(
        session.id, window.id, "new_context", boundary=NewRow("boundary"), opening=[]
    )
    assert store.claims(fresh.id) == frozenset()
    assert store.append_advisory(session.id, fresh.id, "warning", NewRow("warning")) is not None
    assert store.claims(window.id) == {"warning", "handoff"}


@_contract
def claims_survive_reopen(store_factory: StoreFactory) -> None:
    first = store_factory()
    session = first.create_session()
    window = first.current_window(session.id)
    assert first.append_advisory(session.id, window.id, "handoff", NewRow("warning")) is not None
    first.close()
    second = store_factory()
    try:
        assert second.claims(window.id) == {"handoff"}
        assert second.append_advisory(session.id, window.id, "handoff", NewRow("warning")) is None
        assert len(second.rows(session.id)) == 1
    finally:
        second.close()


@_contract
def threads_on_two_handles_claim_once(store: Store, other: Store) -> None:
    session = store.create_session()
    window = store.current_window(session.id)
    results: list[object] = []
    barrier = threading.Barrier(8)

    def claim(handle: Store, n: int) -> None:
        barrier.wait()
        results.append(
            handle.append_advisory(session.id, window.id, "handoff", NewRow("warning", str(n)))
        )

    threads = [
        threading.Thread(target=claim, args=(store if n % 2 else other, n)) for n in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(r is not None for r in results) == 1
    assert len(store.rows(session.id)) == 1


# ---- windows ----------------------------------------------------------------------


@_contract
def rollover_is_one_atomic_batch(store: Store, other: Store) -> None:
    session = store.create_session()
    window = store.current_window(session.id)
    store.append(session.id, window.id, [NewRow("user", "task")])
    new = store.rollover(
        session.id,
        window.id,
        "new_context",
        boundary=NewRow("boundary", None, {"reason": "new_context"}),
        opening=[NewRow("lead_in", "lead"), NewRow("user", "trigger")],
    )
    assert new.index == 2
    assert not new.sealed
    assert other.current_window(session.id) == new
    old, current = other.windows(session.id)
    assert old.id == window.id
    assert old.seal_reason == "new_context"
    assert old.sealed
    assert old.sealed_at is not None
    assert current == new
    assert _texts(other, session.id, window.id) == ["task", None]
    assert _texts(other, session.id, new.id) == ["lead", "trigger"]
    kinds = [r.kind for r in other.rows(session.id)]
    assert kinds == ["user", "boundary", "lead_in", "user"]
    # A second worker rolling over the same window loses and writes nothing.
    with _raises(StaleWindowError):
        other.rollover(
            session.id,
            window.id,
            "forced",
            boundary=NewRow("boundary"),
            opening=[NewRow("lead_in", "dup")],
        )
    assert len(store.windows(session.id)) == 2
    assert len(store.rows(session.id)) == 4


@_contract
def every_seal_reason_is_recorded(store: Store) -> None:
    session = store.create_session()
    for reason in SEAL_REASONS:
        window = store.current_window(session.id)
        store.rollover(session.id, window.id, reason, boundary=NewRow("boundary"), opening=[])
    assert [w.seal_reason for w in store.windows(session.id)] == [*SEAL_REASONS, None]
    bad: Any = "tired"
    window = store.current_window(session.id)
    with _raises(StoreError):
        store.rollover(session.id, window.id, bad, boundary=NewRow("boundary"), opening=[])
    assert store.current_window(session.id) == window


@_contract
def rollover_with_a_bad_opening_row_changes_nothing(store: Store) -> None:
    session = store.create_session()
    window = store.current_window(session.id)
    bad: Any = "nonsense"
    with _raises(StoreError):
        store.rollover(
            session.id,
            window.id,
            "forced",
            boundary=NewRow("boundary"),
            opening=[NewRow("lead_in", "x"), NewRow(bad, "y")],
        )
    assert store.windows(session.id) == [window]
    assert store.rows(session.id) == []


# ---- manual reset and session_history ------------------------------------------------


@_contract
def reset_is_the_privacy_floor(store: Store) -> None:
    session = store.create_session()
    first = store.current_window(session.id)
    store.append(session.id, first.id, [NewRow("user", "secret password")])
    second = store.rollover(
        session.id, first.id, "new_context", boundary=NewRow("boundary"), opening=[]
    )
    store.append(session.id, second.id, [NewRow("user", "secret plan")])
    assert [w.index for w in store.history_windows(session.id)] == [1, 2]
    assert len(store.history_search(session.id, "SECRET")) == 2
    third = store.reset(session.id, opening=[NewRow("lead_in", "fresh start")])
    assert third.index == 3
    assert store.windows(session.id)[1].seal_reason == "manual_reset"
    assert store.current_window(session.id) == third
    assert [w.index for w in store.history_windows(session.id)] == [3]
    assert store.history_search(session.id, "secret") == []
    for index in (1, 2):
        with _raises(WindowNotFoundError):
            store.history_read(session.id, index)
    assert [r.text for r in store.history_read(session.id, 3)] == ["fresh start"]
    # The host's own read still sees everything.
    assert "secret password" in _texts(store, session.id)
    store.append(session.id, third.id, [NewRow("user", "secret again")])
    (hit,) = store.history_search(session.id, "secret")
    assert hit.window_index == 3
    assert hit.row.text == "secret again"


@_contract
def history_search_is_scoped_ordered_and_limited(store: Store) -> None:
    session = store.create_session()
    stranger = store.create_session()
    window = store.current_window(session.id)
    store.append(
        stranger.id, store.current_window(stranger.id).id, [NewRow("user", "needle there")]
    )
    store.append(session.id, window.id, [NewRow("user", f"Needle {i}") for i in range(30)])
    store.append(session.id, window.id, [NewRow("assistant", "no match"), NewRow("user")])
    hits = store.history_search(session.id, "nEEdle")
    assert [h.row.text for h in hits] == [f"Needle {i}" for i in range(29, 9, -1)]
    assert all(h.window_index == 1 and h.row.session_id == session.id for h in hits)
    assert len(store.history_search(session.id, "needle", limit=3)) == 3
    assert len(store.history_search(session.id, "needle", limit=10_000)) == 30
    assert store.history_search(session.id, "absent") == []
    with _raises(StoreError):
        store.history_search(session.id, "  ")


@_contract
def history_search_excerpts_long_rows(store: Store) -> None:
    session = store.create_session()
    window = store.current_window(session.id)
    text = "é" * 50_000 + "NEEDLE" + "z" * 50_000
    (row,) = store.append(session.id, window.id, [NewRow("tool_result", text)])
    (hit,) = store.history_search(session.id, "needle")
    assert hit.row.id == row.id
    assert hit.row.text is not None
    assert "NEEDLE" in hit.row.text
    assert hit.row.text_bytes == len(text.encode())
    excerpt = hit.row.text.encode()
    assert len(excerpt) <= HISTORY_RESULT_MAX_BYTES
    assert text.encode()[hit.excerpt_start : hit.excerpt_start + len(excerpt)] == excerpt


@_contract
def history_search_result_stays_within_16_kib(store: Store) -> None:
    session = store.create_session()
    window = store.current_window(session.id)
    store.append(
        session.id, window.id, [NewRow("tool_result", "match " + "x" * 5000) for _ in range(40)]
    )
    hits = store.history_search(session.id, "match", limit=40)
    assert hits
    assert sum(len((h.row.text or "").encode()) for h in hits) <= HISTORY_RESULT_MAX_BYTES
    assert all(h.row.text_bytes == 5006 for h in hits)


@_contract
def history_search_scan_and_line_bounds(store: Store) -> None:
    session = store.create_session()
    window = store.current_window(session.id)
    line = HISTORY_LINE_MAX_BYTES
    # A match past the first MiB of one huge row is beyond the line bound.
    store.append(session.id, window.id, [NewRow("tool_result", "a" * (line + 10) + "deep")])
    store.append(session.id, window.id, [NewRow("user", "old marker")])
    # Newer rows worth more than the scan bound hide the older marker.
    chunk = 256 * 1024
    filler = [NewRow("tool_result", "f" * chunk) for _ in range(HISTORY_SCAN_MAX_BYTES // chunk)]
    assert store.history_search(session.id, "old marker")
    assert store.history_search(session.id, "deep") == []
    store.append(session.id, window.id, filler)
    store.append(session.id, window.id, [NewRow("user", "new marker")])
    assert store.history_search(session.id, "new marker")
    assert store.history_search(session.id, "old marker") == []


@_contract
def history_read_pages_within_bounds(store: Store) -> None:
    session = store.create_session()
    window = store.current_window(session.id)
    store.append(session.id, window.id, [NewRow("user", f"r{i}") for i in range(600)])
    page = store.history_read(session.id, 1, offset=10, limit=5)
    assert [r.text for r in page] == [f"r{i}" for i in range(10, 15)]
    assert len(store.history_read(session.id, 1, limit=10_000)) == HISTORY_ROWS_MAX
    assert store.history_read(session.id, 1, offset=600) == []
    with _raises(WindowNotFoundError):
        store.history_read(session.id, 2)
    with _raises(WindowNotFoundError):
        store.history_read(session.id, 0)


@_contract
def history_handles_empty_and_missing_text(store: Store) -> None:
    # A tool-call-only assistant response is stored with text "" (or no text at all);
    # search and read must step over such rows, not fail on them.
    session = store.create_session()
    window = store.current_window(session.id)
    store.append(
        session.id,
        window.id,
        [
            NewRow("user", "find the needle"),
            NewRow("assistant", "", {"tool_calls": [{"name": "read_file"}]}),
            NewRow("assistant", None),
            NewRow("tool_result", "needle found"),
        ],
    )
    hits = store.history_search(session.id, "needle")
    assert [h.row.text for h in hits] == ["needle found", "find the needle"]
    assert store.history_search(session.id, "absent") == []
    rows = store.history_read(session.id, 1)
    assert [r.text for r in rows] == ["find the needle", "", None, "needle found"]
    assert all(r.text_bytes is None for r in rows)
    assert rows[1].metadata == {"tool_calls": [{"name": "read_file"}]}


@_contract
def history_read_cuts_text_to_16_kib(store: Store) -> None:
    session = store.create_session()
    window = store.current_window(session.id)
    big = "ü" * 20_000
    store.append(
        session.id,
        window.id,
        [NewRow("user", "small"), NewRow("tool_result", big), NewRow("user", "after")],
    )
    rows = store.history_read(session.id, 1)
    total = sum(len((r.text or "").encode()) for r in rows)
    assert total <= HISTORY_RESULT_MAX_BYTES
    assert rows[0].text == "small"
    assert rows[0].text_bytes is None
    assert rows[1].text_bytes == len(big.encode())
    assert rows[1].text is not None
    assert big.startswith(rows[1].text)


# ---- dispatch lock ----------------------------------------------------------------


@_contract
def dispatch_lock_is_exclusive_across_handles(store: Store, other: Store) -> None:
    session = store.create_session()
    neighbour = store.create_session()
    with store.dispatch_lock(session.id):
        with _raises(SessionInUseError), other.dispatch_lock(session.id):
            pass
        started = time.monotonic()
        with _raises(SessionInUseError), other.dispatch_lock(session.id, timeout=0.2):
            pass
        assert time.monotonic() - started >= 0.15
        with other.dispatch_lock(neighbour.id):  # other sessions are not blocked
            pass
        # Writes go on while the lock is held (the lock is not a database lock).
        window = other.current_window(session.id)
        other.append(session.id, window.id, [NewRow("user", "while locked")])
    with other.dispatch_lock(session.id):
        pass


@_contract
def dispatch_lock_waits_for_release(store: Store, other: Store) -> None:
    session = store.create_session()
    held = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with store.dispatch_lock(session.id):
            held.set()
            release.wait(5)

    thread = threading.Thread(target=holder)
    thread.start()
    assert held.wait(5)
    waiting = threading.Event()
    acquired = threading.Event()

    def waiter() -> None:
        waiting.set()
        with other.dispatch_lock(session.id, timeout=5):
            acquired.set()

    second = threading.Thread(target=waiter)
    second.start()
    assert waiting.wait(5)
    release.set()  # the waiter, already waiting, gets the lock once it is released
    thread.join()
    second.join()
    assert acquired.is_set()


@_contract
def dispatch_lock_released_on_error(store: Store, other: Store) -> None:
    session = store.create_session()
    with _raises(RuntimeError), store.dispatch_lock(session.id):
        raise RuntimeError("dispatch failed")
    with other.dispatch_lock(session.id):
        pass


@_contract
def dispatch_lock_unknown_session(store: Store) -> None:
    with _raises(SessionNotFoundError), store.dispatch_lock("nope"):
        pass


# ---- the session lease ------------------------------------------------------------


@_contract
def lease_is_exclusive_and_names_its_holder(store: Store, other: Store) -> None:
    """A held lease refuses every other acquirer at once, on any handle, with an error
    that names the holder and since when; it is free again once released."""
    session = store.create_session()
    neighbour = store.create_session()
    assert store.lease(session.id) is None
    lease = store.acquire_lease(session.id, label="first")
    assert lease.session_id == session.id
    assert lease.pid > 0
    assert lease.host
    assert lease.expires_at > lease.since
    assert other.lease(session.id) == lease
    for handle in (other, store):  # another handle, and another run of the same handle
        exc = _raised(
            SessionInUseError,
            functools.partial(handle.acquire_lease, session.id, label="second"),
            "a second acquire of a held lease",
        )
        assert exc.session_id == session.id
        assert exc.holder == lease.holder
        assert "first" in exc.holder
        assert exc.since == lease.since
        assert not exc.lost
        assert lease.holder in str(exc)
        assert session.id in str(exc)
    neighbour_lease = other.acquire_lease(neighbour.id)  # other sessions are not blocked
    # Writes go on while the lease is held (it is not a database lock).
    window = other.current_window(session.id)
    other.append(session.id, window.id, [NewRow("user", "while leased")])
    store.release_lease(lease)
    store.release_lease(lease)  # releasing twice does nothing
    assert other.lease(session.id) is None
    taken = other.acquire_lease(session.id)
    assert taken.token != lease.token
    store.release_lease(lease)  # a stale release leaves the new holder alone
    assert store.lease(session.id) == taken
    other.release_lease(taken)
    other.release_lease(neighbour_lease)


@_contract
def lease_waits_up_to_its_timeout(store: Store, other: Store) -> None:
    """An acquirer with a timeout waits that long for a held lease, and gets it as soon
    as it is released."""
    session = store.create_session()
    lease = store.acquire_lease(session.id)
    started = time.monotonic()
    with _raises(SessionInUseError, match="in use by"):
        other.acquire_lease(session.id, timeout=0.2)
    assert time.monotonic() - started >= 0.15
    waiting = threading.Event()
    got: list[Any] = []

    def waiter() -> None:
        waiting.set()
        got.append(other.acquire_lease(session.id, timeout=10))

    thread = threading.Thread(target=waiter)
    thread.start()
    assert waiting.wait(5)
    store.release_lease(lease)
    thread.join()
    assert len(got) == 1
    assert other.lease(session.id) == got[0]


@_contract
def lapsed_lease_is_taken_over(store: Store, other: Store) -> None:
    """A lease its holder stopped renewing is taken over once it lapses; the old holder's
    renewal then fails as lost, and its release leaves the new holder alone."""
    session = store.create_session()
    stale = store.acquire_lease(session.id, ttl=0.3)
    taken = other.acquire_lease(session.id, timeout=30)  # waits for the lapse
    assert taken.token != stale.token
    assert taken.since >= stale.expires_at
    exc = _raised(
        SessionInUseError, lambda: store.renew_lease(stale), "the renewal of a lease taken over"
    )
    assert exc.lost
    assert exc.holder == taken.holder
    store.release_lease(stale)
    assert other.lease(session.id) == taken


@_contract
def renewal_keeps_the_lease(store: Store, other: Store) -> None:
    """A renewed lease outlives its first expiry; a lapsed one nobody took is renewed."""
    session = store.create_session()
    lease = store.acquire_lease(session.id, ttl=0.3)
    renewed = store.renew_lease(lease, ttl=60)
    assert renewed.token == lease.token
    assert renewed.since == lease.since
    assert renewed.expires_at > lease.expires_at
    _past(lease.expires_at)
    with _raises(SessionInUseError):
        other.acquire_lease(session.id)
    short = store.renew_lease(renewed, ttl=0.3)
    _past(short.expires_at)
    assert other.lease(session.id) is None  # lapsed ...
    again = store.renew_lease(short)  # ... but nobody took it: still ours
    assert other.lease(session.id) == again
    store.release_lease(again)


@_contract
def held_lease_is_renewed_while_held(store: Store, other: Store) -> None:
    """``hold_lease`` keeps a short lease alive for as long as it is held."""
    session = store.create_session()
    holding = hold_lease(store, session.id, ttl=0.3)
    try:
        first = holding.lease
        _past(first.expires_at + 0.3)  # well past the first expiry
        with _raises(SessionInUseError):
            other.acquire_lease(session.id)
        holding.check()
    finally:
        holding.release()
    assert other.lease(session.id) is None


@_contract
def lease_unknown_session(store: Store) -> None:
    with _raises(SessionNotFoundError):
        store.acquire_lease("nope")
    with _raises(SessionNotFoundError):
        store.lease("nope")


@_contract
def dispatch_lock_holds_the_lease(store: Store, other: Store) -> None:
    """The dispatch lock is the session's lease: each excludes the other."""
    session = store.create_session()
    with store.dispatch_lock(session.id):
        held = other.lease(session.id)
        assert held is not None
        assert held.label == "dispatch"
        with _raises(SessionInUseError, match="dispatch"):
            other.acquire_lease(session.id)
    lease = other.acquire_lease(session.id)
    with _raises(SessionInUseError), store.dispatch_lock(session.id):
        pass
    other.release_lease(lease)


# ---- durability -------------------------------------------------------------------


@_contract
def everything_survives_reopen(store_factory: StoreFactory) -> None:
    first = store_factory()
    session = first.create_session(metadata={"k": "v"})
    window = first.current_window(session.id)
    first.append(session.id, window.id, [NewRow("user", "one")])
    first.rollover(
        session.id,
        window.id,
        "forced",
        boundary=NewRow("boundary"),
        opening=[NewRow("lead_in")],
    )
    rows = first.rows(session.id)
    windows = first.windows(session.id)
    first.close()
    second = store_factory()
    try:
        assert second.get_session(session.id) == session
        assert second.rows(session.id) == rows
        assert second.windows(session.id) == windows
    finally:
        second.close()
