"""A Codex rollout's conversation as text, in the same :class:`Message` pieces as a
Claude Code transcript's (:func:`ctxrelay.transcripts.conversation`), so
``session_history`` searches a Codex thread of the chain as it does a Claude Code session.

The rules (``docs/codex-facts.md``, "Rollouts"): only ``response_item`` lines count; a
``message`` of role ``user`` (the prompts, and the hook prompts Codex adds) or
``assistant`` gives its ``input_text`` / ``output_text`` parts (``developer`` and
``system`` messages, the instructions, are left out); a ``function_call`` or
``custom_tool_call`` is a tool call (its arguments as written), a
``function_call_output`` or ``custom_tool_call_output`` its result. Reasoning, events,
token counts and the other line types are skipped, as are a line that is not JSON and
one longer than ``line_cap``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

from ctxrelay.budget.bounds import TRANSCRIPT_LINE_MAX_BYTES
from ctxrelay.transcripts._conversation import Message, MessageKind, lines_of
from ctxrelay.transcripts._hot import open_regular

__all__ = ["codex_conversation"]

_TEXTS = ("input_text", "output_text", "text")


def _output(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return str(value["content"])
    if isinstance(value, list):
        return "\n".join(
            str(x.get("text", "")) for x in value if isinstance(x, dict) and "text" in x
        )
    return json.dumps(value, ensure_ascii=False)


def _of(item: dict[str, Any]) -> Iterator[Message]:
    kind = item.get("type")
    if kind == "message" and item.get("role") in ("user", "assistant"):
        role: MessageKind = "user" if item.get("role") == "user" else "assistant"
        for part in item.get("content") or ():
            text = part.get("text") if isinstance(part, dict) else None
            if part.get("type") in _TEXTS and isinstance(text, str) and text.strip():
                yield Message(role, text)
    elif kind in ("function_call", "custom_tool_call"):
        args = item.get("arguments", item.get("input", ""))
        text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        yield Message("tool_call", text, str(item.get("name", "")), str(item.get("call_id", "")))
    elif kind in ("function_call_output", "custom_tool_call_output"):
        yield Message(
            "tool_result", _output(item.get("output")), call_id=str(item.get("call_id", ""))
        )


def codex_conversation(
    path: str | os.PathLike[str], *, line_cap: int = TRANSCRIPT_LINE_MAX_BYTES
) -> Iterator[Message]:
    """The conversation of the rollout at ``path``, oldest first (nothing when it is
    missing or not a regular file)."""
    fd = open_regular(os.fspath(path))
    if fd is None:
        return
    for line in lines_of(fd, line_cap):
        if b'"response_item"' not in line:
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        payload = record.get("payload") if isinstance(record, dict) else None
        if record.get("type") == "response_item" and isinstance(payload, dict):
            yield from _of(payload)
