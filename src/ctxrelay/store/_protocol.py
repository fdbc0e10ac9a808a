"""The store seam: one Protocol, two backends (SQLite, PostgreSQL), one conformance suite.

Domain values are frozen dataclasses; ``metadata`` is JSON-serialisable. Claims derive
from durably published rows: an advisory row and its (window, stage) claim commit in one
transaction, so a restart re-derives them and never repeats an advisory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

# session_history's bounds are owned by ``ctxrelay.budget.bounds``; re-exported here.
from ctxrelay.budget.bounds import (
    HISTORY_LINE_MAX_BYTES,
    HISTORY_RESULT_MAX_BYTES,
    HISTORY_ROWS_MAX,
    HISTORY_SCAN_MAX_BYTES,
)

__all__ = [
    "HISTORY_LINE_MAX_BYTES",
    "HISTORY_RESULT_MAX_BYTES",
    "HISTORY_ROWS_MAX",
    "HISTORY_SCAN_MAX_BYTES",
    "LEASE_TTL_S",
    "ROW_KINDS",
    "SEAL_REASONS",
    "HistoryHit",
    "Lease",
    "NewRow",
    "Row",
    "RowKind",
    "SealReason",
    "SessionInfo",
    "Store",
    "WindowInfo",
]

RowKind = Literal[
    "user", "assistant", "tool_call", "tool_result", "warning", "boundary", "lead_in", "flush"
]
ROW_KINDS: tuple[RowKind, ...] = (
    "user",
    "assistant",
    "tool_call",
    "tool_result",
    "warning",
    "boundary",
    "lead_in",
    "flush",
)
SealReason = Literal["new_context", "forced", "emergency", "manual_reset", "legacy_flush"]
SEAL_REASONS: tuple[SealReason, ...] = (
    "new_context",
    "forced",
    "emergency",
    "manual_reset",
    "legacy_flush",
)


@dataclass(frozen=True, slots=True)
class SessionInfo:
    id: str
    created_at: float
    status: str
    """``running``, ``paused``, ``done``, ``stopped`` or ``failed`` (runtime-defined)."""
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class WindowInfo:
    id: str
    session_id: str
    index: int
    """1-based position of the window in its session."""
    opened_at: float
    sealed_at: float | None = None
    seal_reason: SealReason | None = None

    @property
    def sealed(self) -> bool:
        return self.seal_reason is not None


@dataclass(frozen=True, slots=True)
class NewRow:
    """A row to append; the store assigns its id, sequence and time."""

    kind: RowKind
    text: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Row:
    id: int
    session_id: str
    window_id: str
    seq: int
    """Position in the session, strictly increasing across windows."""
    kind: RowKind
    text: str | None
    metadata: Mapping[str, Any]
    created_at: float
    text_bytes: int | None = None
    """Set only on rows from ``history_search``/``history_read`` whose ``text`` was cut to
    the history bounds: the full size of the text in UTF-8 bytes (``None`` = text whole)."""


@dataclass(frozen=True, slots=True)
class HistoryHit:
    """A search result of ``session_history``: the row and the window it belongs to.

    ``row.text`` is an excerpt around the first match when the text is long (then
    ``row.text_bytes`` is the full size and ``excerpt_start`` the excerpt's byte offset)."""

    window_index: int
    row: Row
    excerpt_start: int = 0


#: Seconds a session's lease lasts unless its holder renews it (a holder renews it every
#: third of this while its run lasts); a holder that stops renewing loses it this late.
LEASE_TTL_S = 30.0


@dataclass(frozen=True, slots=True)
class Lease:
    """One run's hold on a session (one driver per session), as the store records it.

    A lease is live until ``expires_at`` (the store's clock) unless its holder renews it.
    ``node`` names the process namespace ``pid`` belongs to (host name, boot and PID
    namespace on Linux; empty elsewhere): an acquirer in the same namespace also takes
    over the lease of a ``pid`` that no longer exists."""

    session_id: str
    token: str
    """Random, one per acquisition: what renew and release check."""
    host: str
    pid: int
    since: float
    """When the holder acquired it (Unix seconds, the store's clock)."""
    expires_at: float
    node: str = ""
    label: str = ""
    """What holds it (``runtime``, ``openai-agents``, ...), for messages."""

    @property
    def holder(self) -> str:
        """Who holds it, for messages: ``pid 4242 on build-7 (openai-agents)``."""
        what = f" ({self.label})" if self.label else ""
        return f"pid {self.pid} on {self.host}{what}"


@runtime_checkable
class Store(Protocol):
    """Durable sessions, windows, rows and claims. Every method is one transaction."""

    # sessions
    def create_session(
        self, *, metadata: Mapping[str, Any] | None = None, session_id: str | None = None
    ) -> SessionInfo:
        """Create a session with its first window open."""
        ...

    def get_session(self, session_id: str) -> SessionInfo:
        """Raise ``SessionNotFoundError`` when absent."""
        ...

    def list_sessions(self, *, limit: int = 100) -> list[SessionInfo]:
        """Newest first."""
        ...

    def update_session(
        self,
        session_id: str,
        *,
        status: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> SessionInfo:
        """Set the status and/or merge keys into the metadata."""
        ...

    # windows
    def windows(self, session_id: str) -> list[WindowInfo]: ...

    def current_window(self, session_id: str) -> WindowInfo:
        """The open (newest) window."""
        ...

    def rollover(
        self,
        session_id: str,
        window_id: str,
        reason: SealReason,
        *,
        boundary: NewRow,
        opening: Sequence[NewRow],
    ) -> WindowInfo:
        """Atomically append ``boundary`` to the open window ``window_id``, seal it with
        ``reason``, open the next window and append ``opening`` (lead-in, triggering
        message) to it. Raises ``StoreError`` if ``window_id`` is not the open window
        (another worker rolled over first), so a rollover is never duplicated."""
        ...

    def reset(self, session_id: str, *, opening: Sequence[NewRow] = ()) -> WindowInfo:
        """Manual reset: seal the open window with ``manual_reset`` and open the next;
        history reads never return rows from before this point (the privacy floor)."""
        ...

    # rows
    def append(self, session_id: str, window_id: str, rows: Sequence[NewRow]) -> list[Row]:
        """Append a batch atomically (all rows or none) to the open window ``window_id``."""
        ...

    def append_advisory(
        self, session_id: str, window_id: str, stage: str, row: NewRow
    ) -> Row | None:
        """Claim (window, stage) and append the advisory row in one transaction; ``None``
        when the stage was already claimed in that window (nothing is appended)."""
        ...

    def claims(self, window_id: str) -> frozenset[str]:
        """The stages claimed in a window."""
        ...

    def rows(
        self,
        session_id: str,
        *,
        window_id: str | None = None,
        after_seq: int = 0,
        limit: int | None = None,
    ) -> list[Row]:
        """Rows in order (all of a session's, or one window's), including those before
        the privacy floor: this is the host's own read, not the agent's."""
        ...

    # session_history (agent-facing; bounded, scoped, above the privacy floor)
    def history_windows(self, session_id: str) -> list[WindowInfo]:
        """Windows visible to the agent (those after the newest manual reset)."""
        ...

    def history_search(self, session_id: str, query: str, *, limit: int = 20) -> list[HistoryHit]:
        """Case-insensitive substring search over row text, newest first, within the bounds."""
        ...

    def history_read(
        self, session_id: str, window_index: int, *, offset: int = 0, limit: int = 50
    ) -> list[Row]:
        """Rows of one visible window by position, within the bounds."""
        ...

    # coordination: the session's lease (one driver per session)
    def acquire_lease(
        self,
        session_id: str,
        *,
        ttl: float = LEASE_TTL_S,
        timeout: float = 0.0,
        label: str = "",
    ) -> Lease:
        """Take the session's lease for ``ttl`` seconds. A live lease of another holder
        (another process, or another run of this one) makes it wait up to ``timeout``
        seconds, then raise ``SessionInUseError`` naming the holder and since when. A
        lease whose holder died is taken over: expired, or held by a process of this
        machine's process namespace that no longer exists."""
        ...

    def renew_lease(self, lease: Lease, *, ttl: float = LEASE_TTL_S) -> Lease:
        """Extend ``lease`` to ``ttl`` seconds from now (also after it expired, if nobody
        took it meanwhile); raise ``SessionInUseError`` with ``lost=True`` when another
        holder took it over or it was released."""
        ...

    def release_lease(self, lease: Lease) -> None:
        """Give ``lease`` up; nothing happens if it is no longer held by it."""
        ...

    def lease(self, session_id: str) -> Lease | None:
        """The session's live lease, or ``None`` when nobody holds it (or its holder died)."""
        ...

    def dispatch_lock(
        self, session_id: str, *, timeout: float = 0.0
    ) -> AbstractContextManager[None]:
        """Hold the session's lease for the block (renewed while the block runs, released
        at its end, also on error): the runtime's dispatch lock. Raises
        ``SessionInUseError`` (alias ``SessionBusyError``) as :meth:`acquire_lease`."""
        ...

    def close(self) -> None: ...
