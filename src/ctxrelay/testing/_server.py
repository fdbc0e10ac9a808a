"""The HTTP machinery both wire formats share: a threaded server on 127.0.0.1 (free port),
started and stopped in-process, that records every request and writes chunked streams
it can cut, garble or stall on purpose.

A test server fails fast. An exception raised while answering (a route's assertion, a
script step that cannot be served) is recorded; that request and every later one are
answered ``400`` with the exception's text (an error the SDKs and the Claude Code CLI do
not retry), and :meth:`LocalServer.stop` (so leaving the ``with`` block) raises the
exception in the test. A test never waits out a client's retries of a dropped
connection.

A test can hold a model request (:meth:`LocalServer.hold`): the server takes it in and
answers nothing until the test releases it, so a test sees a request in flight (to kill
its client, for example) without sleeping."""

from __future__ import annotations

import contextlib
import gzip
import json
import math
import select
import socket
import threading
import time
import uuid
import zlib
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Literal, Self

from ctxrelay.testing._script import Fault, Router, Script, Step

__all__ = ["Hold", "LocalServer", "RecordedRequest", "Refusal"]

Refusal = Literal["body", "field", "conversation", "model", "too_long"]
"""Why a request is refused before it reaches the script (see ``LocalServer._refuse``)."""


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as the server received it. ``headers`` keys are lower-case; ``body`` is
    the parsed JSON (``None`` when the body was empty or not JSON); ``path`` keeps the query."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any
    raw: bytes

    @property
    def route(self) -> str:
        """The path without its query string, e.g. ``/v1/messages``."""
        return self.path.split("?", 1)[0]


def new_id(prefix: str) -> str:
    """A fresh id in the wire formats' style (``msg_…``, ``req_…``, ``call_…``)."""
    return prefix + uuid.uuid4().hex[:24]


def retry_headers(fault: Fault) -> dict[str, str]:
    """The wait a fault asks for, in both headers the SDKs read."""
    if fault.retry_after is None:
        return {}
    return {
        "retry-after": str(math.ceil(fault.retry_after)),
        "retry-after-ms": str(int(fault.retry_after * 1000)),
    }


def estimate_tokens(value: Any) -> int:
    """About four bytes a token, at least one: what the server reports when a step leaves
    the count open (a real tokenizer would be no more "true" for a scripted model)."""
    size = len(value.encode("utf-8") if isinstance(value, str) else json.dumps(value))
    return max(1, (size + 3) // 4)


class Hold:
    """One model request the server holds (from :meth:`LocalServer.hold`).

    :attr:`arrived` is set once the request is in (recorded, checked, its step not yet
    taken). Its answer then waits until :meth:`release` (it takes its step and is answered
    as usual), until its client hangs up (a killed process: no step is taken, so the
    script's next step is the next request's), or until the server stops."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.body: Mapping[str, Any] | None = None
        """The held request's JSON body, once it arrived."""
        self.hung_up = threading.Event()
        """Set when the client went away while its request was held."""
        self._released = threading.Event()

    def release(self) -> None:
        """Let the held request (or, if none arrived yet, the next one) be answered."""
        self._released.set()

    def _wait(self, handler: _Handler, body: Mapping[str, Any], stopping: threading.Event) -> bool:
        """Hold ``handler``'s request; True when it is to be answered now."""
        self.body = body
        self.arrived.set()
        while not self._released.is_set():
            if stopping.is_set():
                return False
            if _hung_up(handler.connection, 0.05):
                self.hung_up.set()
                handler.close_connection = True
                return False
        return True


def _hung_up(conn: socket.socket, timeout: float) -> bool:
    """Whether the peer closed ``conn`` (waiting up to ``timeout`` for it to say so)."""
    readable, _, _ = select.select([conn], [], [], timeout)
    if not readable:
        return False
    try:
        return conn.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class _Stream:
    """A chunked response body the handler writes event by event."""

    def __init__(self, handler: _Handler) -> None:
        self._h = handler

    def write(self, data: bytes) -> None:
        if not data:
            return
        self._h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self._h.wfile.flush()

    def end(self) -> None:
        self._h.wfile.write(b"0\r\n\r\n")
        self._h.wfile.flush()

    def cut(self) -> None:
        """Close the connection mid-body: the client sees an incomplete chunked read."""
        self._h.wfile.flush()
        self._h.close_connection = True
        with contextlib.suppress(OSError):
            self._h.connection.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass  # tests read ``requests``; stderr chatter would only hide failures

    def _read_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            raw = b"".join(parts)
        else:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        encoding = self.headers.get("content-encoding", "").lower()
        if encoding == "gzip":
            raw = gzip.decompress(raw)
        elif encoding == "deflate":
            raw = zlib.decompress(raw)
        return raw

    _answered = False  # the status line of the current request is sent

    def send_response(self, code: int, message: str | None = None) -> None:
        self._answered = True
        super().send_response(code, message)

    def _handle(self) -> None:
        self._answered = False
        raw = self._read_body()
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        record = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw=raw,
        )
        owner = self.server.owner
        owner._record(record)
        failure = owner.failure
        if failure is not None:  # fail fast: the script is not run any further
            owner._answer_failure(self, failure)
            return
        try:
            owner._dispatch(self, record)
        except (ConnectionError, TimeoutError):
            raise  # the client hung up (a timeout test): not the server's failure
        except Exception as exc:
            owner._fail(exc)
            if self._answered:  # mid-answer: all that is left is to drop the connection
                self.close_connection = True
            else:
                owner._answer_failure(self, exc)

    do_GET = _handle
    do_POST = _handle
    do_HEAD = _handle
    do_PUT = _handle
    do_DELETE = _handle
    do_PATCH = _handle

    # -- helpers the wire formats use -------------------------------------------------

    def send_json(
        self, status: int, payload: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        self.wfile.flush()

    def start_stream(self, headers: Mapping[str, str] | None = None) -> _Stream:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        return _Stream(self)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, owner: LocalServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up mid-stream (a timeout test) is expected, not news.
        pass


class LocalServer:
    """Base of the wire-format servers: start/stop, request log, step dispatch.

    Use as a context manager (``with AnthropicServer(steps) as srv: ...``) or call
    ``start()``/``stop()``. ``requests`` lists every request received; ``unknown`` the ones
    on routes this server does not implement (answered with the provider's 404 shape).
    ``api_key``, ``models`` and ``context_window`` turn on the checks a real API makes
    (each wire format words the refusals its own way).
    """

    wire: ClassVar[str] = ""

    def __init__(
        self,
        script: Script | Router | Iterable[Step] | None = None,
        *,
        api_key: str | None = None,
        models: Collection[str] | None = None,
        context_window: int | None = None,
        model: str | None = None,
    ) -> None:
        self.script = Script.coerce(script)
        self.api_key = api_key
        self.models = None if models is None else frozenset(models)
        self.context_window = context_window
        self.model = model
        self._requests: list[RecordedRequest] = []
        self._unknown: list[RecordedRequest] = []
        self._holds: list[Hold] = []
        self._lock = threading.Lock()
        self._failure: Exception | None = None
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> Self:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = _HTTPServer(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"ctxrelay-{self.wire}-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; raises the exception a route or step raised while serving, if
        any (once), so the test fails with it."""
        httpd, thread = self._httpd, self._thread
        if httpd is not None:
            self._stopping.set()  # wakes stalls and delays so handler threads finish
            httpd.shutdown()
            httpd.server_close()
            if thread is not None:
                thread.join(timeout=5)
            self._httpd = self._thread = None
        with self._lock:
            failure, self._failure = self._failure, None
        if failure is not None:
            raise failure

    @property
    def failure(self) -> Exception | None:
        """The first exception raised while answering a request (``None``: none yet)."""
        with self._lock:
            return self._failure

    def _fail(self, exc: Exception) -> None:
        with self._lock:
            if self._failure is None:
                self._failure = exc

    def _answer_failure(self, handler: _Handler, exc: Exception) -> None:
        """Answer with a status no client retries, naming what failed in the server."""
        text = f"the test server failed: {type(exc).__name__}: {exc}"
        with contextlib.suppress(OSError):
            self._error(handler, Fault.http(400, text[:2000]))

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the server is not running; call start() first")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no path)."""
        return f"http://127.0.0.1:{self.port}"

    # -- the request log ----------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def unknown(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._unknown)

    def requests_to(self, route: str) -> list[RecordedRequest]:
        """Requests whose path (query stripped) is ``route``."""
        return [r for r in self.requests if r.route == route]

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()
            self._unknown.clear()

    def _record(self, record: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(record)

    def _record_unknown(self, record: RecordedRequest) -> None:
        with self._lock:
            self._unknown.append(record)

    def hold(self) -> Hold:
        """Hold the next model request that arrives (after those already held): see
        :class:`Hold`. Each call holds one more request."""
        hold = Hold()
        with self._lock:
            self._holds.append(hold)
        return hold

    # -- helpers for subclasses ---------------------------------------------------------

    def sleep(self, seconds: float) -> bool:
        """Wait up to ``seconds``; True when the server is stopping (cut the answer short)."""
        if seconds <= 0:
            return self._stopping.is_set()
        return self._stopping.wait(seconds)

    @staticmethod
    def chunks(text: str, size: int = 16) -> Iterator[str]:
        """Split text into streaming deltas the way a model emits a few tokens at a time."""
        for start in range(0, len(text), size):
            yield text[start : start + size]

    @staticmethod
    def now() -> int:
        return int(time.time())

    def _dispatch(self, handler: _Handler, record: RecordedRequest) -> None:
        raise NotImplementedError

    def _authorized(self, handler: _Handler, record: RecordedRequest) -> bool:
        """True when no key is set or the request presents it; else answers 401."""
        if self.api_key is None or self.api_key in self._presented_keys(record):
            return True
        self._error(handler, Fault.http(401))
        return False

    def _presented_keys(self, record: RecordedRequest) -> tuple[str | None, ...]:
        """The keys a request presents: ``Authorization: Bearer <key>``."""
        return (record.headers.get("authorization", "").removeprefix("Bearer ").strip(),)

    # How the wire format reads a request: its required fields in the order the API checks
    # them (with the type each must have), and the fields that make up the prompt.
    _REQUIRED: ClassVar[tuple[tuple[str, type], ...]] = ()
    _PROMPT_KEYS: ClassVar[tuple[str, ...]] = ()

    def _refuse(self, handler: _Handler, why: Refusal, detail: Any) -> None:
        """Answer a request the real API refuses, in its words: ``body`` (not JSON),
        ``field`` (``detail``: the missing field), ``conversation`` (``detail``: what is
        wrong with it), ``model`` (``detail``: a model not served), ``too_long``
        (``detail``: the prompt's estimated tokens)."""
        raise NotImplementedError

    def _conversation_problem(self, messages: list[Any]) -> str | None:
        """What the real API would refuse in ``messages`` (``None``: nothing)."""
        return None

    def _serve(self, handler: _Handler, record: RecordedRequest) -> None:
        """The model route: check the request as the real API does (key, JSON body,
        required fields, the conversation, the model, the window), take the script's
        step, and let the wire format answer it."""
        if not self._authorized(handler, record):
            return
        body = record.body
        if not isinstance(body, Mapping):
            self._refuse(handler, "body", None)
            return
        for name, kind in self._REQUIRED:
            value = body.get(name)
            if not isinstance(value, kind) or (kind is str and not value):
                self._refuse(handler, "field", name)
                return
        problem = self._conversation_problem(body["messages"])
        if problem is not None:
            self._refuse(handler, "conversation", problem)
            return
        if self.models is not None and body["model"] not in self.models:
            self._refuse(handler, "model", body["model"])
            return
        prompt = {k: body.get(k) for k in self._PROMPT_KEYS}
        if self.context_window is not None:
            tokens = estimate_tokens(prompt)
            if tokens > self.context_window:
                self._refuse(handler, "too_long", tokens)
                return
        step = self._take_step(handler, body)
        if step is not None:
            self._answer(handler, body, prompt, step)

    def _answer(
        self, handler: _Handler, body: Mapping[str, Any], prompt: dict[str, Any], step: Step
    ) -> None:
        """Answer an accepted request with the script's ``step`` (``prompt``: the
        request's prompt fields, for estimated usage)."""
        raise NotImplementedError

    def _take_step(self, handler: _Handler, body: Mapping[str, Any]) -> Step | None:
        """The script's next step for a valid request, after its delay; ``None`` when the
        request is already answered: the server is stopping, the request was held and its
        client hung up, the step's fault is an error status (sent), or a stall (waited
        out, then the connection is dropped)."""
        with self._lock:
            hold = self._holds.pop(0) if self._holds else None
        if hold is not None and not hold._wait(handler, body, self._stopping):
            return None
        step = self.script.next_step(body)
        if self.sleep(step.delay_s):
            return None
        fault = step.fault
        if fault is not None and fault.kind == "status":
            self._error(handler, fault)
            return None
        if fault is not None and fault.kind == "stall":
            self.sleep(fault.stall_s)
            handler.close_connection = True
            return None
        return step

    def _error(self, handler: _Handler, fault: Fault) -> None:
        """Answer with ``fault.status`` in the wire format's error shape."""
        raise NotImplementedError

    # A streamed answer's fault events, in the wire format: an event cut off mid-way, one
    # that is not JSON, and the stream's last event (sent after the garbled one).
    _CUT_EVENT: ClassVar[bytes] = b""
    _GARBLED_EVENT: ClassVar[bytes] = b""
    _LAST_EVENT: ClassVar[bytes] = b""

    def _stream_error(self, fault: Fault) -> bytes:
        """The wire format's in-stream error event for ``fault``."""
        raise NotImplementedError

    def _send_stream(
        self,
        handler: _Handler,
        events: Sequence[bytes],
        fault: Fault | None,
        headers: Mapping[str, str],
        *,
        head: int,
    ) -> None:
        """Stream ``events``; with a fault, only the first ``head`` of them, then break as
        the fault says: cut mid-event (``truncate``), a garbled event (``garbage``), a
        stall then a cut (``stall_mid``), or the in-stream error event (``stream_error``)."""
        stream = handler.start_stream(headers)
        if fault is None:
            for event in events:
                stream.write(event)
            stream.end()
            return
        for event in events[:head]:
            stream.write(event)
        if fault.kind == "truncate":
            stream.write(self._CUT_EVENT)
            stream.cut()
        elif fault.kind == "garbage":
            stream.write(self._GARBLED_EVENT)
            stream.write(self._LAST_EVENT)
            stream.end()
        elif fault.kind == "stall_mid":
            self.sleep(fault.stall_s)
            stream.cut()
        else:
            stream.write(self._stream_error(fault))
            stream.end()

    def _broken_json(self, handler: _Handler, payload: Any, fault: Fault) -> None:
        """A non-streamed answer that breaks as ``fault`` says: an error status instead
        (``stream_error``), a body that is not JSON (``garbage``), or half the body and a
        cut connection (``truncate``; ``stall_mid`` waits first)."""
        data = json.dumps(payload).encode()
        if fault.kind == "stream_error":
            self._error(handler, Fault.http(fault.status, fault.message))
            return
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        if fault.kind == "garbage":
            handler.wfile.write(b"{this is not json" + b" " * (len(data) - 17))
            handler.wfile.flush()
            return
        if fault.kind == "stall_mid":
            self.sleep(fault.stall_s)
        handler.wfile.write(data[: len(data) // 2])
        _Stream(handler).cut()
