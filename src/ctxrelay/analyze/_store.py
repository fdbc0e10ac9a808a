"""ctxrelay's own sessions (``--db``): the runtime's stored rows read as a chain.

The runtime records each model response as an ``assistant`` row whose metadata holds
``usage`` (Anthropic's four categories), ``model`` and ``context_tokens``; its windows
are the chain's restarts (agent-led handoffs and forced rollovers, not compactions).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any

from ctxrelay.analyze._policies import DEFAULT_POLICIES, Policy, Sweep
from ctxrelay.analyze._report import SessionReport, analyze_transcript
from ctxrelay.pricing import DEFAULT_PRICES, PriceTable
from ctxrelay.transcripts import Response, Transcript, usage_of

__all__ = ["analyze_store", "store_transcript"]

# A store holds at most this many sessions in one report; newest first.
MAX_SESSIONS = 10_000


def _shown(target: str) -> str:
    """The store as a report may show it: a URL's password is never printed."""
    if "://" not in target:
        return target
    parts = urllib.parse.urlsplit(target)
    if parts.password is None:
        return target
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    user = f"{parts.username}@" if parts.username else ""
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{user}{host}"))


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def store_transcript(store: Any, session_id: str, where: str) -> tuple[Transcript, dict[str, Any]]:
    """The stored session as a :class:`Transcript` (one response per assistant row, one
    segment per window) and the session's saved config (``limit``, ``output_reserve``)."""
    info = store.get_session(session_id)
    index = {w.id: w.index for w in store.windows(session_id)}
    responses: list[Response] = []
    models: dict[str, None] = {}
    for row in store.rows(session_id):
        if row.kind != "assistant":
            continue
        usage = usage_of(row.metadata.get("usage"))
        if usage is None:
            continue
        model = row.metadata.get("model")
        model = model if isinstance(model, str) and model else None
        if model:
            models[model] = None
        responses.append(
            Response(
                f"row-{row.id}",
                model,
                usage,
                segment=index.get(row.window_id, 1) - 1,
                timestamp=str(row.created_at),
            )
        )
    config = info.metadata.get("config")
    return (
        Transcript(
            path=f"{where}#{session_id}",
            session_id=session_id,
            version=None,
            responses=tuple(responses),
            models=tuple(models),
        ),
        config if isinstance(config, dict) else {},
    )


def analyze_store(
    target: str,
    *,
    session_ids: Sequence[str] = (),
    policies: Sequence[Policy] = DEFAULT_POLICIES,
    sweep: Sweep | None = None,
    prices: PriceTable = DEFAULT_PRICES,
    limit: int | None = None,
    warm_prefix: bool = False,
    progress: Callable[[str], None] | None = None,
) -> list[SessionReport]:
    """Every session of the store at ``target`` (or those named), oldest first."""
    from ctxrelay.store import open_store  # noqa: PLC0415 — the store and its driver (sqlite3, psycopg): analyze --json reads no store (tests/cli/test_analyze.py)

    store = open_store(target, create=False)
    try:
        ids = list(session_ids) or [s.id for s in reversed(store.list_sessions(limit=MAX_SESSIONS))]
        reports = []
        for session_id in ids:
            transcript, config = store_transcript(store, session_id, _shown(target))
            reports.append(
                analyze_transcript(
                    transcript,
                    policies=policies,
                    sweep=sweep,
                    prices=prices,
                    limit=limit or _int(config.get("limit")),
                    output_reserve=_int(config.get("output_reserve")),
                    warm_prefix=warm_prefix,
                )
            )
            if progress is not None:
                progress(session_id)
        return reports
    finally:
        store.close()
