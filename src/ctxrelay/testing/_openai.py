"""A local server that speaks OpenAI Chat Completions as the real API (and vLLM, Ollama,
llama.cpp) does: streaming chunks with tool_calls deltas, the final usage chunk when
``stream_options.include_usage`` is set, the JSON form, models, and real error shapes;
and, beside it, the Responses API (``POST /v1/responses``, shapes in ``_responses``)."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from typing import Any, ClassVar

from ctxrelay.testing import _responses
from ctxrelay.testing._script import Fault, Router, Script, Step
from ctxrelay.testing._server import (
    LocalServer,
    RecordedRequest,
    Refusal,
    _Handler,
    estimate_tokens,
    new_id,
    retry_headers,
)

__all__ = ["OpenAIServer", "tool_message_problem"]

# status -> (error.type, error.code, default message), as the real API sends them.
_ERRORS: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "invalid request"),
    401: (
        "invalid_request_error",
        "invalid_api_key",
        "Incorrect API key provided. You can find your API key in your account settings.",
    ),
    403: ("invalid_request_error", "unsupported_country_region_territory", "Forbidden"),
    404: ("invalid_request_error", "model_not_found", "Not found"),
    429: (
        "requests",
        "rate_limit_exceeded",
        "Rate limit reached for requests. Please try again shortly.",
    ),
    500: ("server_error", None, "The server had an error while processing your request."),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
}
_FINISH = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}


def _data(payload: Mapping[str, Any] | str) -> bytes:
    text = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    return f"data: {text}\n\n".encode()


def tool_message_problem(messages: list[Any]) -> str | None:
    """The API's check of tool turns, with its wording: each assistant ``tool_calls``
    answered by ``tool`` messages right after it, no ``tool`` message without one."""
    pending: list[str] = []
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, Mapping) else None
        if role == "tool":
            call_id = str(message.get("tool_call_id"))
            if call_id not in pending:
                return (
                    f"Invalid parameter: messages[{i}]: messages with role 'tool' must be a "
                    "response to a preceeding message with 'tool_calls'."
                )
            pending.remove(call_id)
            continue
        if pending:
            return _unanswered(pending)
        if role == "assistant":
            calls = message.get("tool_calls") or []
            pending = [str(c.get("id")) for c in calls if isinstance(c, Mapping)]
    return _unanswered(pending) if pending else None


def _unanswered(pending: list[str]) -> str:
    return (
        "An assistant message with 'tool_calls' must be followed by tool messages "
        "responding to each 'tool_call_id'. The following tool_call_ids did not "
        f"have response messages: {', '.join(pending)}"
    )


class OpenAIServer(LocalServer):
    """``POST /v1/chat/completions`` and ``POST /v1/responses`` (each streaming and not)
    and ``GET /v1/models``. Other routes are recorded in ``unknown`` and answered 404 in
    the real error shape. Both model routes take their answers from the one script.

    ``api_key``: when set, requests without ``Authorization: Bearer <key>`` get 401.
    ``models``: when set, other models get 404 ``model_not_found``.
    ``context_window``: when set, a request estimated above it gets 400
    ``context_length_exceeded``. ``stream_usage=False`` never sends the usage chunk (nor
    a streamed response's ``usage``), and
    ``tool_call_index=False`` sends each tool call whole without its ``index``, as some
    local servers do. Point the SDK at ``base_url`` (it ends in ``/v1``).
    Usage mapping: ``prompt_tokens`` = input + cache creation + cache read of the step,
    ``prompt_tokens_details.cached_tokens`` = cache read (OpenAI has no cache writes).
    Responses: ``input_tokens`` the same sum, ``input_tokens_details.cached_tokens`` the
    cache read, ``cache_write_tokens`` the cache creation.

    Responses keeps the responses it served (unless ``store`` is false) so that
    ``previous_response_id`` continues one as the API does, and the conversations made
    with ``POST /v1/conversations`` so that ``conversation`` does; an unknown id gets the
    API's 400 (a response) or 404 (a conversation). ``POST /v1/responses/compact``
    answers the input's user messages and one opaque ``compaction`` item, outside the
    script.
    """

    wire: ClassVar[str] = "openai"
    _CUT_EVENT: ClassVar[bytes] = b'data: {"id":"chatcmpl-trunc","object":"chat.compl'
    _GARBLED_EVENT: ClassVar[bytes] = b"data: {this is not json\n\n"
    _LAST_EVENT: ClassVar[bytes] = _data("[DONE]")

    def __init__(
        self,
        script: Script | Router | Iterable[Step] | None = None,
        *,
        api_key: str | None = None,
        models: Collection[str] | None = None,
        context_window: int | None = None,
        model: str | None = None,
        stream_usage: bool = True,
        tool_call_index: bool = True,
    ) -> None:
        super().__init__(
            script, api_key=api_key, models=models, context_window=context_window, model=model
        )
        self.stream_usage = stream_usage
        self.tool_call_index = tool_call_index
        self._stored: dict[str, list[Any]] = {}  # response id -> its input and output
        self._conversations: dict[str, list[Any]] = {}  # conversation id -> its items

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def _dispatch(self, handler: _Handler, record: RecordedRequest) -> None:
        route = record.route.rstrip("/") or "/"
        if route == "/" and record.method in ("GET", "HEAD"):
            handler.send_json(200, {"status": "ok"})
            return
        posts = {
            "/v1/chat/completions": self._serve,
            "/v1/responses": self._serve_responses,
            "/v1/responses/compact": self._serve_compact,
            "/v1/conversations": self._serve_new_conversation,
        }
        if record.method == "POST" and route in posts:
            posts[route](handler, record)
            return
        if record.method == "GET" and route == "/v1/models":
            ids = sorted(self.models) if self.models else [self.model or "gpt-4.1"]
            data = [{"id": i, "object": "model", "created": 0, "owned_by": "local"} for i in ids]
            handler.send_json(200, {"object": "list", "data": data})
            return
        self._record_unknown(record)
        self._error(
            handler, Fault.http(404, f"Invalid URL ({record.method} {record.route})"), code=None
        )

    def _error(
        self,
        handler: _Handler,
        fault: Fault,
        *,
        code: str | bool | None = True,
        param: str | None = None,
    ) -> None:
        etype, default_code, message = _ERRORS.get(fault.status, ("server_error", None, "error"))
        headers = {"x-request-id": new_id("req_")}
        headers.update(retry_headers(fault))
        error = {
            "message": fault.message or message,
            "type": etype,
            "param": param,
            "code": fault.code or (default_code if code is True else code),
        }
        handler.send_json(fault.status, {"error": error}, headers)

    _REQUIRED: ClassVar[tuple[tuple[str, type], ...]] = (("model", str), ("messages", list))
    _PROMPT_KEYS: ClassVar[tuple[str, ...]] = ("messages", "tools")
    _MISSING: ClassVar[dict[str, str]] = {
        "model": "you must provide a model parameter",
        "messages": "Missing required parameter: 'messages'.",
    }

    def _refuse(self, handler: _Handler, why: Refusal, detail: Any) -> None:
        if why == "model":
            message = f"The model `{detail}` does not exist or you do not have access to it."
            self._error(handler, Fault.http(404, message))
        elif why == "too_long":
            too_long = (
                f"This model's maximum context length is {self.context_window} tokens. "
                f"However, your messages resulted in {detail} tokens. "
                "Please reduce the length of the messages."
            )
            self._error(handler, Fault.http(400, too_long), code="context_length_exceeded")
        else:
            if why == "body":
                message = "We could not parse the JSON body of your request."
            elif why == "field":
                message = self._MISSING[detail]
            else:
                message = str(detail)
            self._error(handler, Fault.http(400, message), code=None)

    def _conversation_problem(self, messages: list[Any]) -> str | None:
        return tool_message_problem(messages)

    def _answer(
        self, handler: _Handler, body: Mapping[str, Any], prompt: dict[str, Any], step: Step
    ) -> None:
        model = body["model"]
        fault = step.fault

        usage = self._usage(step, prompt)
        calls = [
            {
                "id": call.id or new_id("call_"),
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(dict(call.input))},
            }
            for call in step.tool_calls
        ]
        reason = step.stop_reason or ("tool_use" if calls else "end_turn")
        finish = _FINISH.get(reason, reason)
        base = {
            "id": new_id("chatcmpl-"),
            "created": self.now(),
            "model": model,
            "system_fingerprint": "fp_ctxrelay",
        }
        headers = {"x-request-id": new_id("req_")}
        if body.get("stream"):
            options = body.get("stream_options")
            include_usage = (
                self.stream_usage
                and isinstance(options, Mapping)
                and bool(options.get("include_usage"))
            )
            self._stream(
                handler,
                base=base,
                step=step,
                calls=calls,
                finish=finish,
                usage=usage if include_usage else None,
                fault=fault,
                headers=headers,
            )
            return
        message: dict[str, Any] = {
            "role": "assistant",
            "content": step.text if step.text is not None or not calls else None,
            "refusal": None,
        }
        if calls:
            message["tool_calls"] = calls
        payload = dict(
            base,
            object="chat.completion",
            choices=[{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            usage=usage,
        )
        if fault is None:
            handler.send_json(200, payload, headers)
            return
        self._broken_json(handler, payload, fault)

    def _usage(self, step: Step, prompt: Mapping[str, Any]) -> dict[str, Any]:
        cached = step.cache_creation_input_tokens + step.cache_read_input_tokens
        fresh = (
            step.input_tokens
            if step.input_tokens is not None
            else max(1, estimate_tokens(prompt) - cached)
        )
        prompt_tokens = fresh + cached
        if step.output_tokens is not None:
            completion = step.output_tokens
        else:
            completion = estimate_tokens(
                (step.text or "") + "".join(json.dumps(c.input) for c in step.tool_calls)
            )
        return {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion,
            "prompt_tokens_details": {
                "cached_tokens": step.cache_read_input_tokens,
                "audio_tokens": 0,
            },
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }

    def _stream(
        self,
        handler: _Handler,
        *,
        base: Mapping[str, Any],
        step: Step,
        calls: list[dict[str, Any]],
        finish: str,
        usage: Mapping[str, Any] | None,
        fault: Fault | None,
        headers: Mapping[str, str],
    ) -> None:
        with_usage = usage is not None

        def chunk(delta: Mapping[str, Any], finish_reason: str | None = None) -> bytes:
            payload = dict(
                base,
                object="chat.completion.chunk",
                choices=[
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
                ],
            )
            if with_usage:
                payload["usage"] = None
            return _data(payload)

        events = [chunk({"role": "assistant", "content": "", "refusal": None})]
        for piece in self.chunks(step.text or ""):
            events.append(chunk({"content": piece}))
        for index, call in enumerate(calls):
            if not self.tool_call_index:
                events.append(chunk({"tool_calls": [call]}))
                continue
            head = {
                "index": index,
                "id": call["id"],
                "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""},
            }
            events.append(chunk({"tool_calls": [head]}))
            for piece in self.chunks(call["function"]["arguments"]):
                events.append(
                    chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                )
        events.append(chunk({}, finish))
        if usage is not None:
            events.append(
                _data(dict(base, object="chat.completion.chunk", choices=[], usage=usage))
            )
        events.append(self._LAST_EVENT)

        self._send_stream(handler, events, fault, headers, head=2)

    def _stream_error(self, fault: Fault) -> bytes:
        """An error object in the stream, as the API sends mid-stream."""
        etype, code, message = _ERRORS.get(fault.status, _ERRORS[500])
        error = {
            "message": fault.message or message,
            "type": etype,
            "param": None,
            "code": code,
        }
        return _data({"error": error})

    # -- /v1/responses ------------------------------------------------------------------

    def _model_body(self, handler: _Handler, record: RecordedRequest) -> Mapping[str, Any] | None:
        """The JSON body of an authorized request that names a model; ``None`` when the
        request was refused (the refusal is sent)."""
        if not self._authorized(handler, record):
            return None
        body = record.body
        if not isinstance(body, Mapping):
            self._refuse(handler, "body", None)
            return None
        if not isinstance(body.get("model"), str) or not body["model"]:
            self._refuse(handler, "field", "model")
            return None
        return body

    def _serve_responses(self, handler: _Handler, record: RecordedRequest) -> None:
        """The Responses route, checked as the API checks it (key, JSON body, model,
        ``input``, stored state, tool turns, the model, the window), then answered from
        the script like the Chat route."""
        body = self._model_body(handler, record)
        if body is None:
            return
        history = self._history(handler, body)
        if history is None:
            return
        conv_id, items = history
        problem = _responses.input_problem(items)
        if problem is not None:
            self._error(handler, Fault.http(400, problem), code=None, param="input")
            return
        if self.models is not None and body["model"] not in self.models:
            self._refuse(handler, "model", body["model"])
            return
        prompt = {k: body.get(k) for k in _responses.PROMPT_KEYS}
        prompt["input"] = items
        if self.context_window is not None:
            tokens = estimate_tokens(prompt)
            if tokens > self.context_window:
                self._refuse(handler, "too_long", tokens)
                return
        step = self._take_step(handler, body)
        if step is None:
            return
        response = _responses.response_object(body, step, prompt, created_at=self.now())
        with self._lock:
            if body.get("store") is not False:
                self._stored[response["id"]] = [*items, *response["output"]]
            if conv_id is not None:
                self._conversations[conv_id] += [
                    *_responses.input_items(body.get("input")),
                    *response["output"],
                ]
        headers = {"x-request-id": new_id("req_")}
        fault = step.fault
        if not body.get("stream"):
            if fault is None:
                handler.send_json(200, response, headers)
            else:
                self._broken_json(handler, response, fault)
            return
        if not self.stream_usage:  # a compatible server that reports no usage
            response["usage"] = None
        events = [
            _responses.sse(dict(event, sequence_number=n))
            for n, event in enumerate(_responses.response_events(response, self.chunks))
        ]
        # Faults strike after the response began and its first output item was added.
        head = 3
        if fault is not None and fault.kind == "stream_error":
            code = _ERRORS.get(fault.status, _ERRORS[500])[1] or "server_error"
            error = _responses.stream_error(fault, head, fault.code or code)
            self._send_stream(handler, [*events[:head], error], None, headers, head=head)
            return
        self._send_stream(handler, events, fault, headers, head=head)

    def _history(
        self, handler: _Handler, body: Mapping[str, Any]
    ) -> tuple[str | None, list[Any]] | None:
        """The conversation id (if any) and the whole input of a Responses request: the
        stored conversation or previous response, then ``input``; ``None`` when the
        request was refused (``input`` of the wrong type, an unknown id)."""
        raw = body.get("input")
        if raw is not None and not isinstance(raw, str | list):
            message = (
                "Invalid type for 'input': expected one of a string or array of input "
                f"items, but got {type(raw).__name__} instead."
            )
            self._error(handler, Fault.http(400, message), code="invalid_type", param="input")
            return None
        items = _responses.input_items(raw)
        conversation = body.get("conversation")
        conv_id = None
        if conversation is not None:
            conv_id = str(
                conversation.get("id") if isinstance(conversation, Mapping) else conversation
            )
            with self._lock:
                earlier = self._conversations.get(conv_id)
            if earlier is None:
                message = f"Conversation with id '{conv_id}' not found."
                self._error(handler, Fault.http(404, message), code=None, param="conversation")
                return None
            items = [*earlier, *items]
        previous = body.get("previous_response_id")
        if previous is not None:
            with self._lock:
                earlier = self._stored.get(str(previous))
            if earlier is None:
                message = f"Previous response with id '{previous}' not found."
                self._error(
                    handler,
                    Fault.http(400, message),
                    code="previous_response_not_found",
                    param="previous_response_id",
                )
                return None
            items = [*earlier, *items]
        return conv_id, items

    def _serve_new_conversation(self, handler: _Handler, record: RecordedRequest) -> None:
        if not self._authorized(handler, record):
            return
        body = record.body if isinstance(record.body, Mapping) else {}
        conv_id = new_id("conv_")
        conversation = {
            "id": conv_id,
            "object": "conversation",
            "created_at": self.now(),
            "metadata": body.get("metadata") or {},
        }
        with self._lock:
            self._conversations[conv_id] = _responses.input_items(body.get("items"))
        handler.send_json(200, conversation, {"x-request-id": new_id("req_")})

    def _serve_compact(self, handler: _Handler, record: RecordedRequest) -> None:
        body = self._model_body(handler, record)
        if body is None:
            return
        history = self._history(handler, body)
        if history is None:
            return
        compacted = _responses.compacted(history[1], created_at=self.now())
        handler.send_json(200, compacted, {"x-request-id": new_id("req_")})
