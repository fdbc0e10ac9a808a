"""Builders of synthetic transcript lines, shaped like Claude Code 2.1's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def assistant(
    message_id: str,
    *,
    input_tokens: int = 1,
    created: int = 0,
    read: int = 0,
    output: int = 1,
    model: str = "claude-opus-4-6",
    sidechain: bool = False,
    one_hour: int | None = None,
) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": created,
        "cache_read_input_tokens": read,
        "output_tokens": output,
    }
    if one_hour is not None:
        usage["cache_creation"] = {
            "ephemeral_5m_input_tokens": created - one_hour,
            "ephemeral_1h_input_tokens": one_hour,
        }
    return {
        "type": "assistant",
        "isSidechain": sidechain,
        "sessionId": "s-1",
        "version": "2.1.39",
        "message": {"id": message_id, "model": model, "role": "assistant", "usage": usage},
    }


def user(text: str = "hi", **extra: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": text}, **extra}


def boundary(pre_tokens: int = 167_000, trigger: str = "auto") -> dict[str, Any]:
    return {
        "type": "system",
        "subtype": "compact_boundary",
        "compactMetadata": {"trigger": trigger, "preTokens": pre_tokens},
    }


def dumps(record: Any) -> bytes:
    """One line as Claude Code writes it (``JSON.stringify``: no spaces, UTF-8)."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()


def write(path: Path, records: list[Any], *, tail: bytes = b"") -> Path:
    with path.open("wb") as f:
        for record in records:
            line = record if isinstance(record, bytes) else dumps(record)
            f.write(line + b"\n")
        f.write(tail)
    return path
