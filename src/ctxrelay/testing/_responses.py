"""The OpenAI Responses API's wire shapes for the local server (``POST /v1/responses``):
the response object, its stream of typed SSE events, usage, and the API's own checks of
an ``input`` list. Shapes follow the ``openai`` package's ``types/responses``; the route
itself is :class:`ctxrelay.testing.OpenAIServer`'s.

Two tool calls take the shapes Codex 0.171 uses for deferred tools (``docs/codex-facts.md``,
"MCP servers"): a call of :data:`TOOL_SEARCH` is a ``tool_search_call`` item (executed by
the client), and a call named ``namespace.name`` (a dot, which no function name may hold)
is a ``function_call`` of ``name`` in that ``namespace``."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ctxrelay.testing._script import Fault, Step
from ctxrelay.testing._server import estimate_tokens, new_id

__all__ = [
    "PROMPT_KEYS",
    "TOOL_SEARCH",
    "compacted",
    "input_items",
    "input_problem",
    "output_items",
    "response_events",
    "response_object",
    "sse",
    "stream_error",
    "usage",
]

TOOL_SEARCH = "tool_search"
"""The client-executed tool search of Codex's deferred tools."""

PROMPT_KEYS = ("instructions", "input", "tools")
"""The request fields that make up the prompt (for estimated usage and the window check)."""

# A step's stop reason -> (status, incomplete_details.reason).
_STATUS: dict[str, tuple[str, str | None]] = {
    "end_turn": ("completed", None),
    "tool_use": ("completed", None),
    "max_tokens": ("incomplete", "max_output_tokens"),
    "refusal": ("incomplete", "content_filter"),
}

# The request settings the response object echoes, with the API's defaults.
_ECHOED: dict[str, Any] = {
    "instructions": None,
    "max_output_tokens": None,
    "metadata": {},
    "parallel_tool_calls": True,
    "previous_response_id": None,
    "temperature": 1.0,
    "tool_choice": "auto",
    "tools": [],
    "top_p": 1.0,
    "truncation": "disabled",
    "store": True,
}


def sse(event: Mapping[str, Any]) -> bytes:
    """One event as the API streams it: ``event: <type>`` and its JSON ``data``."""
    data = json.dumps(event, separators=(",", ":"))
    return f"event: {event['type']}\ndata: {data}\n\n".encode()


def input_items(raw: Any) -> list[Any]:
    """``input`` as a list of items: a string is one user message."""
    if isinstance(raw, str):
        return [{"role": "user", "content": raw}]
    return list(raw) if isinstance(raw, list) else []


def input_problem(items: Sequence[Any]) -> str | None:
    """The API's check of tool turns, in its words: every ``function_call_output``
    answers a ``function_call`` earlier in the input, and every ``function_call`` has its
    output. ``None`` when the input is valid."""
    called: list[str] = []
    answered: set[str] = set()
    for item in items:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type")
        call_id = str(item.get("call_id"))
        if kind == "function_call":
            called.append(call_id)
        elif kind == "function_call_output":
            if call_id not in called:
                return f"No tool call found for function call output with call_id {call_id}."
            answered.add(call_id)
    for call_id in called:
        if call_id not in answered:
            return f"No tool output found for function call {call_id}."
    return None


def usage(step: Step, prompt: Mapping[str, Any]) -> dict[str, Any]:
    """The Responses usage of a step: ``input_tokens`` is the whole prompt (fresh input,
    cache writes and cache reads), ``cached_tokens`` the reads, ``cache_write_tokens``
    the writes."""
    cached = step.cache_creation_input_tokens + step.cache_read_input_tokens
    fresh = (
        step.input_tokens
        if step.input_tokens is not None
        else max(1, estimate_tokens(prompt) - cached)
    )
    if step.output_tokens is not None:
        output = step.output_tokens
    else:
        output = estimate_tokens(
            (step.text or "") + "".join(json.dumps(c.input) for c in step.tool_calls)
        )
    return {
        "input_tokens": fresh + cached,
        "input_tokens_details": {
            "cached_tokens": step.cache_read_input_tokens,
            "cache_write_tokens": step.cache_creation_input_tokens,
        },
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": fresh + cached + output,
    }


def output_items(step: Step) -> list[dict[str, Any]]:
    """The step's answer as output items: a ``message`` with its text (when there is
    text, or nothing else), then one ``function_call`` per tool call."""
    items: list[dict[str, Any]] = []
    if step.text or not step.tool_calls:
        items.append(
            {
                "id": new_id("msg_"),
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": step.text or "",
                        "annotations": [],
                        "logprobs": [],
                    }
                ],
            }
        )
    for call in step.tool_calls:
        if call.name == TOOL_SEARCH:
            items.append(
                {
                    "id": new_id("ts_"),
                    "type": "tool_search_call",
                    "status": "completed",
                    "call_id": call.id or new_id("call_"),
                    "execution": "client",
                    "arguments": dict(call.input),
                }
            )
            continue
        namespace, _, name = call.name.rpartition(".")
        item = {
            "id": new_id("fc_"),
            "type": "function_call",
            "status": "completed",
            "call_id": call.id or new_id("call_"),
            "name": name,
            "arguments": json.dumps(dict(call.input)),
        }
        if namespace:
            item["namespace"] = namespace
        items.append(item)
    return items


def response_object(
    body: Mapping[str, Any],
    step: Step,
    prompt: Mapping[str, Any],
    *,
    created_at: int,
) -> dict[str, Any]:
    """The finished response for ``step``, echoing the request's settings."""
    reason = step.stop_reason or ("tool_use" if step.tool_calls else "end_turn")
    status, incomplete = _STATUS.get(reason, ("completed", None))
    response: dict[str, Any] = {
        "id": new_id("resp_"),
        "object": "response",
        "created_at": created_at,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": None if incomplete is None else {"reason": incomplete},
        "model": body["model"],
        "output": output_items(step),
        "reasoning": {"effort": None, "summary": None},
        "service_tier": "default",
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "usage": usage(step, prompt),
        "user": None,
    }
    for key, default in _ECHOED.items():
        value = body.get(key)
        response[key] = default if value is None else value
    if status == "completed":
        response["completed_at"] = created_at
    return response


def response_events(response: Mapping[str, Any], chunks: Any) -> Iterator[dict[str, Any]]:
    """The stream of ``response``, event by event, as the API sends it (without
    ``sequence_number``, which the caller numbers): created, in progress, each output
    item added / its deltas / done, then completed (or incomplete). ``chunks`` splits a
    text into deltas."""
    pending = dict(response, status="in_progress", output=[], usage=None, incomplete_details=None)
    pending.pop("completed_at", None)
    yield {"type": "response.created", "response": pending}
    yield {"type": "response.in_progress", "response": pending}
    for index, item in enumerate(response["output"]):
        if item["type"] == "message":
            yield from _message_events(index, item, chunks)
        else:
            yield from _call_events(index, item, chunks)
    last = "response.completed" if response["status"] == "completed" else "response.incomplete"
    yield {"type": last, "response": response}


def _message_events(index: int, item: Mapping[str, Any], chunks: Any) -> Iterator[dict[str, Any]]:
    item_id = item["id"]
    yield {
        "type": "response.output_item.added",
        "output_index": index,
        "item": dict(item, status="in_progress", content=[]),
    }
    for content_index, part in enumerate(item["content"]):
        where = {"item_id": item_id, "output_index": index, "content_index": content_index}
        yield {"type": "response.content_part.added", **where, "part": dict(part, text="")}
        for piece in chunks(part["text"]):
            yield {"type": "response.output_text.delta", **where, "delta": piece, "logprobs": []}
        yield {"type": "response.output_text.done", **where, "text": part["text"], "logprobs": []}
        yield {"type": "response.content_part.done", **where, "part": part}
    yield {"type": "response.output_item.done", "output_index": index, "item": item}


def _call_events(index: int, item: Mapping[str, Any], chunks: Any) -> Iterator[dict[str, Any]]:
    if item["type"] == "tool_search_call":  # no argument deltas: sent whole
        yield {"type": "response.output_item.added", "output_index": index, "item": item}
        yield {"type": "response.output_item.done", "output_index": index, "item": item}
        return
    where = {"item_id": item["id"], "output_index": index}
    yield {
        "type": "response.output_item.added",
        "output_index": index,
        "item": dict(item, status="in_progress", arguments=""),
    }
    for piece in chunks(item["arguments"]):
        yield {"type": "response.function_call_arguments.delta", **where, "delta": piece}
    yield {
        "type": "response.function_call_arguments.done",
        **where,
        "name": item["name"],
        "arguments": item["arguments"],
    }
    yield {"type": "response.output_item.done", "output_index": index, "item": item}


def stream_error(fault: Fault, sequence_number: int, code: str | None) -> bytes:
    """The API's in-stream ``error`` event."""
    return sse(
        {
            "type": "error",
            "code": code,
            "message": fault.message or "The server had an error while processing your request.",
            "param": None,
            "sequence_number": sequence_number,
        }
    )


def compacted(items: Sequence[Any], *, created_at: int) -> dict[str, Any]:
    """What ``POST /v1/responses/compact`` answers: the input's user messages, then one
    ``compaction`` item whose (here not encrypted, but opaque) content stands for the
    rest."""
    users = [_as_message(item) for item in items if _is_user_message(item)]
    rest = len(items) - len(users)
    compaction = {
        "id": new_id("cmp_"),
        "type": "compaction",
        "encrypted_content": f"ctxrelay-test-compaction:{rest}-items",
    }
    size = estimate_tokens(list(items))
    return {
        "id": new_id("resp_"),
        "object": "response.compaction",
        "created_at": created_at,
        "output": [*users, compaction],
        "usage": {
            "input_tokens": size,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": 1,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": size + 1,
        },
    }


def _is_user_message(item: Any) -> bool:
    if not isinstance(item, Mapping) or item.get("role") != "user":
        return False
    return bool(item.get("type", "message") == "message")


def _as_message(item: Mapping[str, Any]) -> dict[str, Any]:
    content = item.get("content")
    if isinstance(content, str):
        content = [{"type": "input_text", "text": content}]
    return {
        "id": new_id("msg_"),
        "type": "message",
        "status": "completed",
        "role": "user",
        "content": content,
    }
