"""A local server that speaks the Gemini API (``v1beta``) as the Gemini CLI uses it:
``models/<model>:streamGenerateContent?alt=sse`` (the agent's turns: server-sent
``GenerateContentResponse`` chunks), ``models/<model>:generateContent`` (the CLI's utility
calls: titles, compression, routing), ``models/<model>:countTokens``, function calls as
``functionCall`` parts, and ``usageMetadata`` with cached and thinking tokens. Errors in
Google's shape (``{"error": {"code", "message", "status"}}``).

A step's usage maps onto ``usageMetadata``: ``promptTokenCount`` is the whole prompt
(fresh input, cache writes and cache reads), ``cachedContentTokenCount`` the reads,
``candidatesTokenCount`` the output, ``thoughtsTokenCount`` the step's reasoning tokens.
Point the Gemini CLI at it with ``GOOGLE_GEMINI_BASE_URL=<base_url>`` and any
``GEMINI_API_KEY``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any, ClassVar

from ctxrelay.testing._script import Fault, Router, Script, Step
from ctxrelay.testing._server import (
    LocalServer,
    RecordedRequest,
    Refusal,
    _Handler,
    estimate_tokens,
    retry_headers,
)

__all__ = ["GeminiServer", "function_turn_problem"]

_ROUTE = re.compile(r"^/v1(?:beta|alpha)?/models/([^/:]+):([A-Za-z]+)$")

# status -> Google's ``error.status``, and its default message.
_STATUS: dict[int, tuple[str, str]] = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    401: ("UNAUTHENTICATED", "API key not valid. Please pass a valid API key."),
    403: ("PERMISSION_DENIED", "The caller does not have permission"),
    404: ("NOT_FOUND", "Requested entity was not found."),
    429: ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    500: ("INTERNAL", "An internal error has occurred."),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
}
_FINISH = {"end_turn": "STOP", "tool_use": "STOP", "max_tokens": "MAX_TOKENS", "refusal": "SAFETY"}


def _data(payload: Mapping[str, Any]) -> bytes:
    # The API ends each event with CRLF CRLF; the CLI's SSE reader takes both endings.
    return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\r\n\r\n"


def _parts(content: Any) -> list[Any]:
    parts = content.get("parts") if isinstance(content, Mapping) else None
    return parts if isinstance(parts, list) else []


def function_turn_problem(contents: list[Any]) -> str | None:
    """The API's check of function turns, in its words: a model turn's function calls
    are answered by as many ``functionResponse`` parts in the user turn right after it."""
    for index, content in enumerate(contents):
        calls = [p for p in _parts(content) if isinstance(p, Mapping) and "functionCall" in p]
        if not calls:
            continue
        following = contents[index + 1] if index + 1 < len(contents) else None
        if following is None:
            return (
                "Please ensure that function call turn comes immediately after a user turn "
                "or after a function response turn."
            )
        answers = [
            p for p in _parts(following) if isinstance(p, Mapping) and "functionResponse" in p
        ]
        if len(answers) < len(calls):
            return (
                "Please ensure that the number of function response parts is equal to the "
                "number of function call parts of the function call turn."
            )
    return None


class GeminiServer(LocalServer):
    """The Gemini API's model routes (any other route is recorded in ``unknown`` and
    answered 404 in Google's shape).

    ``api_key``: when set, a request without it (``x-goog-api-key`` or ``?key=``) gets
    400 "API key not valid", as the real API answers. ``models``: when set, other models
    get 404. ``context_window``: when set, a request estimated above it gets 400.
    ``utility``: the steps (or router) that answer ``generateContent`` (the CLI's own
    side calls); without it those draw from the main script too. The router sees the
    request body with the model (from the path) added as ``"model"``.
    """

    wire: ClassVar[str] = "gemini"
    _CUT_EVENT: ClassVar[bytes] = b'data: {"candidates":[{"content":{"role":"model","par'
    _GARBLED_EVENT: ClassVar[bytes] = b"data: {this is not json\r\n\r\n"
    _LAST_EVENT: ClassVar[bytes] = _data(
        {"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}}]}
    )
    _PROMPT_KEYS: ClassVar[tuple[str, ...]] = ("systemInstruction", "contents", "tools")

    def __init__(
        self,
        script: Script | Router | Iterable[Step] | None = None,
        *,
        utility: Script | Router | Iterable[Step] | None = None,
        api_key: str | None = None,
        models: Collection[str] | None = None,
        context_window: int | None = None,
    ) -> None:
        super().__init__(script, api_key=api_key, models=models, context_window=context_window)
        self.utility = None if utility is None else Script.coerce(utility)

    @property
    def base_url(self) -> str:
        """What ``GOOGLE_GEMINI_BASE_URL`` is set to (the CLI adds ``/v1beta/...``)."""
        return self.url

    def model_requests(self, *, stream: bool = True) -> list[RecordedRequest]:
        """The agent's turns (``streamGenerateContent``), or with ``stream=False`` the
        utility calls (``generateContent``), in order."""
        method = "streamGenerateContent" if stream else "generateContent"
        return [r for r in self.requests if r.route.endswith(f":{method}")]

    # -- routing ------------------------------------------------------------------------

    def _dispatch(self, handler: _Handler, record: RecordedRequest) -> None:
        match = _ROUTE.match(record.route)
        if record.method == "POST" and match is not None:
            model, method = match.groups()
            if method in ("streamGenerateContent", "generateContent"):
                self._serve_content(handler, record, model, stream=method.startswith("stream"))
                return
            if method == "countTokens":
                if self._authorized(handler, record):
                    body = record.body if isinstance(record.body, Mapping) else {}
                    request = body.get("generateContentRequest", body)
                    counted = {k: request.get(k) for k in self._PROMPT_KEYS}
                    handler.send_json(200, {"totalTokens": estimate_tokens(counted)})
                return
        self._record_unknown(record)
        self._error(handler, Fault.http(404, f"Not found: {record.method} {record.route}"))

    def _presented_keys(self, record: RecordedRequest) -> tuple[str | None, ...]:
        query = record.path.partition("?")[2]
        keys = [v for k, _, v in (p.partition("=") for p in query.split("&")) if k == "key"]
        return (record.headers.get("x-goog-api-key"), *keys)

    def _authorized(self, handler: _Handler, record: RecordedRequest) -> bool:
        if self.api_key is None or self.api_key in self._presented_keys(record):
            return True
        self._error(handler, Fault.http(400, _STATUS[401][1]))
        return False

    def _error(self, handler: _Handler, fault: Fault) -> None:
        status, message = _STATUS.get(fault.status, ("UNKNOWN", "error"))
        error = {"code": fault.status, "message": fault.message or message, "status": status}
        handler.send_json(fault.status, {"error": error}, retry_headers(fault))

    def _refuse(self, handler: _Handler, why: Refusal, detail: Any) -> None:
        if why == "model":
            message = (
                f"models/{detail} is not found for API version v1beta, or is not supported "
                "for generateContent."
            )
            self._error(handler, Fault.http(404, message))
        elif why == "too_long":
            message = (
                f"The input token count ({detail}) exceeds the maximum number of tokens "
                f"allowed ({self.context_window})."
            )
            self._error(handler, Fault.http(400, message))
        elif why == "body":
            self._error(handler, Fault.http(400, "Invalid JSON payload received."))
        elif why == "field":
            self._error(handler, Fault.http(400, f"* GenerateContentRequest.{detail}: required"))
        else:
            self._error(handler, Fault.http(400, str(detail)))

    # -- generateContent / streamGenerateContent -----------------------------------------

    def _serve_content(
        self, handler: _Handler, record: RecordedRequest, model: str, *, stream: bool
    ) -> None:
        if not self._authorized(handler, record):
            return
        body = record.body
        if not isinstance(body, Mapping):
            self._refuse(handler, "body", None)
            return
        contents = body.get("contents")
        if not isinstance(contents, list) or not contents:
            self._refuse(handler, "field", "contents")
            return
        problem = function_turn_problem(contents)
        if problem is not None:
            self._refuse(handler, "conversation", problem)
            return
        if self.models is not None and model not in self.models:
            self._refuse(handler, "model", model)
            return
        prompt = {k: body.get(k) for k in self._PROMPT_KEYS}
        if self.context_window is not None:
            tokens = estimate_tokens(prompt)
            if tokens > self.context_window:
                self._refuse(handler, "too_long", tokens)
                return
        seen = dict(body, model=model)
        if not stream and self.utility is not None:
            step: Step | None = self.utility.next_step(seen)
        else:
            step = self._take_step(handler, seen)
        if step is None:
            return
        response = self._response(model, step, prompt)
        if stream:
            self._send_stream(handler, list(self._events(response)), step.fault, {}, head=1)
        elif step.fault is None:
            handler.send_json(200, response)
        else:
            self._broken_json(handler, response, step.fault)

    @staticmethod
    def usage(step: Step, prompt: Mapping[str, Any]) -> dict[str, int]:
        """The step's ``usageMetadata`` (counts the step leaves open are estimated)."""
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
        meta = {"promptTokenCount": fresh + cached, "candidatesTokenCount": output}
        if step.cache_read_input_tokens:
            meta["cachedContentTokenCount"] = step.cache_read_input_tokens
        if step.reasoning_tokens:
            meta["thoughtsTokenCount"] = step.reasoning_tokens
        meta["totalTokenCount"] = fresh + cached + output + step.reasoning_tokens
        return meta

    def _response(self, model: str, step: Step, prompt: Mapping[str, Any]) -> dict[str, Any]:
        parts: list[dict[str, Any]] = []
        if step.text or not step.tool_calls:
            parts.append({"text": step.text or ""})
        for call in step.tool_calls:
            parts.append({"functionCall": {"name": call.name, "args": dict(call.input)}})
        reason = step.stop_reason or ("tool_use" if step.tool_calls else "end_turn")
        return {
            "candidates": [
                {
                    "content": {"role": "model", "parts": parts},
                    "finishReason": _FINISH.get(reason, "STOP"),
                    "index": 0,
                }
            ],
            "usageMetadata": self.usage(step, prompt),
            "modelVersion": model,
        }

    def _events(self, response: Mapping[str, Any]) -> Iterable[bytes]:
        """The response as the API streams it: the text in pieces (each chunk with the
        prompt's count so far), then the function calls, the finish reason and the full
        usage in the last chunk."""
        candidate = response["candidates"][0]
        parts = candidate["content"]["parts"]
        text = "".join(p.get("text", "") for p in parts)
        calls = [p for p in parts if "functionCall" in p]
        usage = response["usageMetadata"]
        early = {"promptTokenCount": usage["promptTokenCount"]}
        pieces = list(self.chunks(text, 64)) if text else []
        last_parts = [{"text": pieces.pop()}] if pieces else []
        for piece in pieces:
            yield _data(
                {
                    "candidates": [{"content": {"role": "model", "parts": [{"text": piece}]}}],
                    "usageMetadata": early,
                    "modelVersion": response["modelVersion"],
                }
            )
        final = dict(candidate, content={"role": "model", "parts": last_parts + calls})
        if not final["content"]["parts"]:
            final["content"]["parts"] = [{"text": ""}]
        yield _data(dict(response, candidates=[final]))

    def _stream_error(self, fault: Fault) -> bytes:
        status = fault.status if fault.status in _STATUS else 503
        name, message = _STATUS[status]
        return _data(
            {"error": {"code": status, "message": fault.message or message, "status": name}}
        )
