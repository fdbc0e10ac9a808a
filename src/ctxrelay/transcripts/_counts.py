"""The token counts of a transcript line.

The subagent hook reads a usage object at every tool call and needs only its context;
:mod:`ctxrelay.transcripts._records` builds its values on the same rules.
"""

from __future__ import annotations

__all__ = ["CONTEXT_KEYS", "SYNTHETIC_MODEL", "as_count", "context_of", "requested_model"]

SYNTHETIC_MODEL = "<synthetic>"
"""The model Claude Code writes on responses it made up itself (API errors, interrupts):
no request was sent, so they are neither requests nor context readings."""


def requested_model(record: object) -> str | None:
    """The model Claude Code asked for on an ``assistant`` line (``requestedModel``, as
    the user named it, ``[1m]`` kept: ``claude-sonnet-4-5[1m]`` where the API's
    ``message.model`` says ``claude-sonnet-4-5``); ``None`` where the line has none."""
    value = record.get("requestedModel") if isinstance(record, dict) else None
    return value if isinstance(value, str) and value and value != SYNTHETIC_MODEL else None


CONTEXT_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
"""The usage fields that sum to the size of a request (``docs/claude-code-facts.md``)."""


def as_count(value: object) -> int:
    """A token count from JSON: non-negative whole numbers only; anything else counts 0
    (a wrong type in one field must not lose the rest of the line)."""
    if type(value) is int:  # the common case first; a bool is not one (its type is bool)
        return value if value > 0 else 0
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):  # a subclass of int
        return value if value > 0 else 0
    if isinstance(value, float) and value.is_integer() and value > 0:
        return int(value)
    return 0


def context_of(raw: object) -> int | None:
    """The context of a ``message.usage`` object (``usage_of(raw).context_tokens``
    without building a :class:`~ctxrelay.transcripts.Usage`); ``None`` when it is not one."""
    if not isinstance(raw, dict):
        return None
    return sum(as_count(raw.get(key)) for key in CONTEXT_KEYS)
