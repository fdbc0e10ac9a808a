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
    "ROW_KINDS",
    "SEAL_REASONS",
    "HistoryHit",
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

    # coordination
    def dispatch_lock(
        self, session_id: str, *, timeout: float = 0.0
    ) -> AbstractContextManager[None]:
        """Hold the session's dispatch lock; raise ``SessionBusyError`` if another worker
        still holds it after ``timeout`` seconds."""
        ...

    def close(self) -> None: ...
