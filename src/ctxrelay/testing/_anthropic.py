"""A local server that speaks the Anthropic Messages API as the real one does: streaming SSE
(message_start with cache usage, text and tool_use blocks with input_json_delta,
message_delta, message_stop), the JSON form, count_tokens, models, and real error shapes."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from ctxrelay.testing._script import Fault, Step
from ctxrelay.testing._server import (
    LocalServer,
    RecordedRequest,
    Refusal,
    _Handler,
    estimate_tokens,
    new_id,
    retry_headers,
)

__all__ = ["ANTHROPIC_ERROR_TYPES", "AnthropicServer", "conversation_problem"]

# The ``error.type`` the real API sends for each status.
ANTHROPIC_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
_DEFAULT_MESSAGES: dict[int, str] = {
    400: "invalid request",
    401: "invalid x-api-key",
    403: "Your API key does not have permission to use the specified resource.",
    404: "Not found",
    413: "Request exceeds the maximum allowed number of bytes.",
    429: "Number of request tokens has exceeded your per-minute rate limit",
    500: "Internal server error",
    504: "Request timed out",
    529: "Overloaded",
}


def _sse(event: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _blocks_of(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, Mapping) else None
    return content if isinstance(content, list) else []


def conversation_problem(messages: list[Any]) -> str | None:
    """The API's own checks of a conversation's shape, with its wording: every
    ``tool_use`` answered by a ``tool_result`` in the next message, no ``tool_result``
    without its ``tool_use``, no empty text block. Messages of other roles (current
    Claude Code sends ``system`` turns under a beta) are left out of the pairing.
    ``None`` when the shape is valid."""
    turns = [
        (i, m)
        for i, m in enumerate(messages)
        if isinstance(m, Mapping) and m.get("role") in ("user", "assistant")
    ]
    for n, (i, message) in enumerate(turns):
        for j, block in enumerate(_blocks_of(message)):
            if isinstance(block, Mapping) and block.get("type") == "text" and not block.get("text"):
                return f"messages.{i}.content.{j}: text content blocks must be non-empty"
        previous = turns[n - 1][1] if n > 0 else None
        offered = (
            {
                b.get("id")
                for b in _blocks_of(previous)
                if isinstance(b, Mapping) and b.get("type") == "tool_use"
            }
            if previous is not None and previous.get("role") == "assistant"
            else set()
        )
        for j, block in enumerate(_blocks_of(message)):
            if not (isinstance(block, Mapping) and block.get("type") == "tool_result"):
                continue
            if block.get("tool_use_id") not in offered:
                return (
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {block.get('tool_use_id')}. Each `tool_result` "
                    "block must have a corresponding `tool_use` block in the previous message."
                )
        if message.get("role") == "assistant" and n + 1 < len(turns):
            wanted = [
                b.get("id")
                for b in _blocks_of(message)
                if isinstance(b, Mapping) and b.get("type") == "tool_use"
            ]
            after, following = turns[n + 1]
            given = {
                b.get("tool_use_id")
                for b in _blocks_of(following)
                if isinstance(b, Mapping) and b.get("type") == "tool_result"
            }
            missing = [w for w in wanted if w not in given]
            if missing:
                return (
                    f"messages.{after}: `tool_use` ids were found without `tool_result` "
                    f"blocks immediately after: {', '.join(map(str, missing))}. Each "
                    "`tool_use` block must have a corresponding `tool_result` block in the "
                    "next message."
                )
    return None


class AnthropicServer(LocalServer):
    """``POST /v1/messages`` (streaming and not), ``POST /v1/messages/count_tokens``,
    ``GET /v1/models[/ID]``, and ``/``, ``/api/hello`` (health checks; Claude Code sends the
    latter when non-essential traffic is allowed). Any other route is recorded in
    ``unknown`` and answered 404 in the real error shape.

    ``api_key``: when set, requests without it (``x-api-key`` or bearer) get 401.
    ``models``: when set, other models get 404 ``not_found_error``.
    ``context_window``: when set, a request estimated above it gets 400 "prompt is too long".
    A conversation the real API would refuse (a ``tool_use`` without its ``tool_result``
    in the next message, an empty text block) gets the API's 400 too.
    Point the SDK at ``base_url``; Claude Code at ``ANTHROPIC_BASE_URL=<base_url>``.
    """

    wire: ClassVar[str] = "anthropic"
    _CUT_EVENT: ClassVar[bytes] = b'event: content_block_delta\ndata: {"type":"content_block_del'
    _GARBLED_EVENT: ClassVar[bytes] = b"event: content_block_delta\ndata: {this is not json\n\n"
    _LAST_EVENT: ClassVar[bytes] = _sse("message_stop", {"type": "message_stop"})

    @property
    def base_url(self) -> str:
        return self.url

    # -- routing ------------------------------------------------------------------------

    def _dispatch(self, handler: _Handler, record: RecordedRequest) -> None:
        route = record.route.rstrip("/") or "/"
        if route in ("/", "/api/hello") and record.method in ("GET", "HEAD"):
            # Claude Code checks connectivity with HEAD /api/hello unless
            # CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC is set.
            handler.send_json(200, {"status": "ok"})
            return
        if record.method == "POST" and route == "/v1/messages":
            self._serve(handler, record)
            return
        if record.method == "POST" and route == "/v1/messages/count_tokens":
            if not self._authorized(handler, record):
                return
            body = record.body if isinstance(record.body, Mapping) else {}
            counted = {k: body.get(k) for k in ("system", "messages", "tools")}
            handler.send_json(200, {"input_tokens": estimate_tokens(counted)})
            return
        if record.method == "GET" and route == "/v1/models":
            handler.send_json(200, self._model_list())
            return
        if record.method == "GET" and route.startswith("/v1/models/"):
            handler.send_json(200, self._model_info(route.removeprefix("/v1/models/")))
            return
        self._record_unknown(record)
        self._error(handler, Fault.http(404, f"Not found: {record.method} {record.route}"))

    def _model_info(self, model_id: str) -> dict[str, Any]:
        return {
            "type": "model",
            "id": model_id,
            "display_name": model_id,
            "created_at": "2025-01-01T00:00:00Z",
        }

    def _model_list(self) -> dict[str, Any]:
        ids = sorted(self.models) if self.models else [self.model or "claude-sonnet-4-5"]
        data = [self._model_info(i) for i in ids]
        return {"data": data, "has_more": False, "first_id": ids[0], "last_id": ids[-1]}

    def _presented_keys(self, record: RecordedRequest) -> tuple[str | None, ...]:
        # Claude Code and the SDK send ``x-api-key``; ``ANTHROPIC_AUTH_TOKEN`` a bearer.
        return (record.headers.get("x-api-key"), *super()._presented_keys(record))

    def _error(self, handler: _Handler, fault: Fault) -> None:
        status = fault.status
        headers = {"request-id": new_id("req_")}
        headers.update(retry_headers(fault))
        if status in (429, 529) or status >= 500:
            headers["x-should-retry"] = "true"
        payload = {
            "type": "error",
            "error": {
                "type": ANTHROPIC_ERROR_TYPES.get(status, "api_error"),
                "message": fault.message or _DEFAULT_MESSAGES.get(status, "error"),
            },
            "request_id": headers["request-id"],
        }
        handler.send_json(status, payload, headers)

    def _invalid(self, handler: _Handler, message: str) -> None:
        self._error(handler, Fault.http(400, message))

    # -- /v1/messages -------------------------------------------------------------------

    _REQUIRED: ClassVar[tuple[tuple[str, type], ...]] = (
        ("model", str),
        ("messages", list),
        ("max_tokens", int),
    )
    _PROMPT_KEYS: ClassVar[tuple[str, ...]] = ("system", "messages", "tools")

    def _refuse(self, handler: _Handler, why: Refusal, detail: Any) -> None:
        if why == "model":
            self._error(handler, Fault.http(404, f"model: {detail}"))
        elif why == "body":
            self._invalid(handler, "The request body is not valid JSON.")
        elif why == "field":
            self._invalid(handler, f"{detail}: Field required")
        elif why == "too_long":
            self._invalid(
                handler, f"prompt is too long: {detail} tokens > {self.context_window} maximum"
            )
        else:
            self._invalid(handler, str(detail))

    def _conversation_problem(self, messages: list[Any]) -> str | None:
        return conversation_problem(messages)

    def _answer(
        self, handler: _Handler, body: Mapping[str, Any], prompt: dict[str, Any], step: Step
    ) -> None:
        model = body["model"]
        fault = step.fault

        usage = self._usage(step, prompt)
        blocks = self._blocks(step)
        stop_reason = step.stop_reason or ("tool_use" if step.tool_calls else "end_turn")
        message = {
            "id": new_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": blocks,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }
        headers = {"request-id": new_id("req_")}
        if body.get("stream"):
            # Faults strike after message_start and the first block began: the client has
            # already seen usage and some content, as when a real connection breaks.
            self._send_stream(handler, list(self._events(message)), fault, headers, head=3)
        elif fault is None:
            handler.send_json(200, message, headers)
        else:
            self._broken_json(handler, message, fault)

    def _usage(self, step: Step, prompt: Mapping[str, Any]) -> dict[str, Any]:
        if step.input_tokens is not None:
            input_tokens = step.input_tokens
        else:
            # The script states the cached part; the rest of the request is fresh input.
            cached = step.cache_creation_input_tokens + step.cache_read_input_tokens
            input_tokens = max(1, estimate_tokens(prompt) - cached)
        if step.output_tokens is not None:
            output_tokens = step.output_tokens
        else:
            output_tokens = estimate_tokens(
                (step.text or "") + "".join(json.dumps(c.input) for c in step.tool_calls)
            )
        return {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": step.cache_creation_input_tokens,
            "cache_read_input_tokens": step.cache_read_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": step.cache_creation_input_tokens,
                "ephemeral_1h_input_tokens": 0,
            },
            "output_tokens": output_tokens,
            "service_tier": "standard",
        }

    @staticmethod
    def _blocks(step: Step) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if step.text:
            blocks.append({"type": "text", "text": step.text})
        for call in step.tool_calls:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call.id or new_id("toolu_"),
                    "name": call.name,
                    "input": dict(call.input),
                }
            )
        if not blocks:
            blocks.append({"type": "text", "text": ""})
        return blocks

    def _events(self, message: Mapping[str, Any]) -> Iterable[bytes]:
        usage = message["usage"]
        start_usage = dict(usage, output_tokens=1)
        yield _sse(
            "message_start",
            {
                "type": "message_start",
                "message": dict(
                    message, content=[], stop_reason=None, stop_sequence=None, usage=start_usage
                ),
            },
        )
        for index, block in enumerate(message["content"]):
            start: dict[str, Any]
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
            else:
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            yield _sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
            if index == 0:
                yield _sse("ping", {"type": "ping"})
            if block["type"] == "text":
                for piece in self.chunks(block["text"]):
                    delta = {"type": "text_delta", "text": piece}
                    yield _sse(
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index, "delta": delta},
                    )
            else:
                encoded = json.dumps(block["input"], separators=(",", ":"))
                for piece in ["", *self.chunks(encoded)]:
                    delta = {"type": "input_json_delta", "partial_json": piece}
                    yield _sse(
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index, "delta": delta},
                    )
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
        final_usage = {
            k: usage[k]
            for k in (
                "input_tokens",
                "cache_creation_input_tokens",
                "cache_read_input_tokens",
                "output_tokens",
            )
        }
        yield _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": final_usage,
            },
        )
        yield _sse("message_stop", {"type": "message_stop"})

    def _stream_error(self, fault: Fault) -> bytes:
        """The API's in-stream ``error`` event."""
        status = fault.status if fault.status in ANTHROPIC_ERROR_TYPES else 529
        error = {
            "type": ANTHROPIC_ERROR_TYPES[status],
            "message": fault.message or _DEFAULT_MESSAGES[status],
        }
        return _sse("error", {"type": "error", "error": error})
