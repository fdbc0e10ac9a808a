"""Naming a stored session on the command line: its full id or a unique start of it, the
rule every command that takes an ID follows (``sessions show|history|reset``,
``run --resume``), and the shortest such start ``sessions list`` prints."""

from __future__ import annotations

from collections.abc import Sequence

from ctxrelay.errors import SessionNotFoundError, StoreError
from ctxrelay.store import SessionInfo, Store

__all__ = ["MIN_PREFIX", "resolve_session", "short_ids"]

MIN_PREFIX = 4
"""The fewest characters of an id that name a session by its start."""

_SHOWN = 5
"""How many of the sessions an ambiguous start matches its error names."""


def resolve_session(store: Store, ident: str) -> SessionInfo:
    """The session with id ``ident``, or the only one whose id starts with it; a
    :class:`SessionNotFoundError` for none, a :class:`StoreError` naming the candidates
    for several."""
    try:
        return store.get_session(ident)
    except SessionNotFoundError:
        if len(ident) < MIN_PREFIX:
            raise
    matches = [s for s in store.list_sessions(limit=100_000) if s.id.startswith(ident)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise SessionNotFoundError(ident)
    starts = short_ids([s.id for s in matches], least=len(ident) + 1)
    named = ", ".join(starts[s.id] for s in matches[:_SHOWN])
    more = f" and {len(matches) - _SHOWN} more" if len(matches) > _SHOWN else ""
    raise StoreError(
        f"{len(matches)} sessions start with {ident!r} ({named}{more}); "
        "give more of the id to choose one"
    )


def short_ids(ids: Sequence[str], least: int = 8) -> dict[str, str]:
    """Each id's shortest unique start (at least ``least`` characters)."""
    out = {}
    for ident in ids:
        n = least
        while n < len(ident) and any(o != ident and o.startswith(ident[:n]) for o in ids):
            n += 1
        out[ident] = ident[:n]
    return out
