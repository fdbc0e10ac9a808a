"""The conformance kit every coding-agent host adapter (:class:`ctxrelay.hooks.host.Host`)
must pass, and a fake host for testing what runs on the core.

It needs no test runner: :func:`run_host_conformance` checks each contract with plain
``assert`` and raises :class:`HostConformanceError` naming the first that fails::

    from ctxrelay.hooks.conformance import run_host_conformance

    run_host_conformance(MY_HOST)

Each contract checks one promise of the protocol's docstrings: the host's name can name
its state folder, every handler module imports and has ``handle``, an empty answer says
nothing, what a handler answers reaches the host's JSON (a deny of a tool call, the
prompt that continues a turn, the context of a start), the encoding is JSON, the dispatch
fails open on bad input, and a missing transcript has not started from anything.
"""

from __future__ import annotations

import importlib
import io
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxrelay.errors import CtxrelayError
from ctxrelay.hooks.dispatch import run
from ctxrelay.hooks.host import Answer, Event, Handler, Host
from ctxrelay.hooks.state import is_plain

__all__ = ["CONTRACTS", "FakeHost", "HostConformanceError", "run_host_conformance"]

_TEXT = "ctxrelay conformance: the text to carry"


class HostConformanceError(CtxrelayError):
    """A host adapter broke a contract of :class:`~ctxrelay.hooks.host.Host`."""


Contract = Callable[[Host], None]
CONTRACTS: list[Contract] = []


def _contract(fn: Contract) -> Contract:
    CONTRACTS.append(fn)
    return fn


def _wire(host: Host, event: Event, name: str, answer: Answer) -> str:
    """The host's encoding of ``answer``, as the JSON text the hook would print."""
    return json.dumps(host.encode(event, name, answer) or {})


@_contract
def is_a_host(host: Host) -> None:
    assert isinstance(host, Host), "it does not have the Host protocol's members"
    assert is_plain(host.name), f"{host.name!r} cannot name a folder"
    assert host.name != "projects", "the shared projects folder is not a host's"


@_contract
def every_handler_imports(host: Host) -> None:
    assert host.handlers, "the host answers no event"
    for name, handler in host.handlers.items():
        assert isinstance(handler, Handler), f"{name}: not a Handler"
        module = importlib.import_module(handler.module)
        assert callable(getattr(module, "handle", None)), f"{handler.module} has no handle()"


@_contract
def an_empty_answer_says_nothing(host: Host) -> None:
    for name, handler in host.handlers.items():
        assert not host.encode(handler.event, name, Answer()), f"{name}: an empty answer spoke"


@_contract
def what_a_handler_answers_reaches_the_host(host: Host) -> None:
    carried = {
        Event.TOOL_CALL: Answer(deny=_TEXT),
        Event.TURN_END: Answer(prompt=_TEXT),
        Event.SESSION_START: Answer(context=_TEXT),
    }
    for name, handler in host.handlers.items():
        answer = carried.get(handler.event)
        if answer is not None:
            assert _TEXT in _wire(host, handler.event, name, answer), f"{name}: {answer} lost"


@_contract
def the_encoding_is_json(host: Host) -> None:
    answers = (
        Answer(deny=_TEXT),
        Answer(context=_TEXT),
        Answer(prompt=_TEXT),
        Answer(prompt=_TEXT, clear=True),
        Answer(notice=_TEXT),
        Answer(context=_TEXT, notice=_TEXT),
    )
    for name, handler in host.handlers.items():
        for answer in answers:
            json.loads(_wire(host, handler.event, name, answer))


@_contract
def the_dispatch_fails_open(host: Host) -> None:
    for bad in ("{not json", "[]", '{"hook_event_name": 7}', '{"hook_event_name": "NoSuch"}'):
        out = io.StringIO()
        assert run(host, io.StringIO(bad), out) == 0, f"{bad!r}: a non-zero exit"
        assert out.getvalue() == "", f"{bad!r}: it answered {out.getvalue()!r}"


@_contract
def a_missing_transcript_has_not_started(host: Host) -> None:
    missing = Path("/nonexistent/ctxrelay-conformance/transcript.jsonl")
    assert host.started(str(missing), Path("/nonexistent/handoff.md")) is False


def run_host_conformance(host: Host) -> list[str]:
    """Run every contract against ``host``; return their names, in order. Raises
    :class:`HostConformanceError` at the first contract broken."""
    ran: list[str] = []
    for contract in CONTRACTS:
        try:
            contract(host)
        except AssertionError as exc:
            raise HostConformanceError(f"{host.name}: {contract.__name__}: {exc}") from None
        ran.append(contract.__name__)
    return ran


@dataclass
class FakeHost:
    """A host whose hooks answer with JSON that spells the :class:`Answer` out, for tests
    of what runs on the core; ``started_by`` lists the transcripts that have started."""

    name: str = "fake"
    handlers: Mapping[str, Handler] = field(default_factory=dict)
    started_by: set[str] = field(default_factory=set)

    def encode(self, event: Event, name: str, answer: Answer) -> Mapping[str, Any] | None:
        parts = {
            "deny": answer.deny,
            "context": answer.context,
            "prompt": answer.prompt,
            "clear": answer.clear or None,
            "notice": answer.notice,
        }
        said = {key: value for key, value in parts.items() if value is not None}
        return {"event": str(event), "name": name, **said} if said else None

    def started(self, transcript_path: str, handoff: Path, since: int | None = None) -> bool:
        return transcript_path in self.started_by
