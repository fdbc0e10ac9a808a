"""The core's dispatch and the Host conformance kit, on a fake host and on every real
adapter."""

from __future__ import annotations

import io
import json

import pytest

from ctxrelay.claude.host import CLAUDE
from ctxrelay.codex.host import CODEX
from ctxrelay.gemini.host import GEMINI
from ctxrelay.hooks.conformance import (
    CONTRACTS,
    FakeHost,
    HostConformanceError,
    run_host_conformance,
)
from ctxrelay.hooks.dispatch import run
from ctxrelay.hooks.host import Answer, Event, Handler, Host
from ctxrelay.opencode.host import OPENCODE

FAKE = FakeHost(handlers={"Before": Handler(Event.TOOL_CALL, "tests.hooks._fake_handler")})


def _run(host: Host, payload: object, **kw: str) -> tuple[str, str]:
    out = io.StringIO()
    err = io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("sys.stderr", err)
        assert run(host, io.StringIO(json.dumps(payload)), out, **kw) == 0
    return out.getvalue(), err.getvalue()


def test_the_dispatch_encodes_the_handlers_answer_the_hosts_way() -> None:
    out, err = _run(FAKE, {"hook_event_name": "Before", "say": "no"})
    assert json.loads(out) == {"event": "tool_call", "name": "Before", "deny": "no"}
    assert err == ""


def test_an_event_named_outside_the_payload() -> None:
    out, _ = _run(FAKE, {"say": "no"}, event="Before")
    assert json.loads(out)["deny"] == "no"


def test_nothing_to_say_prints_nothing() -> None:
    assert _run(FAKE, {"hook_event_name": "Before"}) == ("", "")
    assert _run(FAKE, {"hook_event_name": "After", "say": "no"}) == ("", "")


def test_a_failing_handler_fails_open_with_one_line() -> None:
    out, err = _run(FAKE, {"hook_event_name": "Before", "say": "boom"})
    assert out == ""
    assert err == "ctxrelay fake hook: ignored (RuntimeError: the handler failed)\n"


def test_answers_compose() -> None:
    answer = Answer(prompt="write it").with_notice("one").with_notice("two")
    assert answer.with_prompt("held") == Answer(prompt="write it\n\nheld", notice="one\ntwo")
    assert Answer().with_prompt(None) == Answer()


@pytest.mark.parametrize("host", [FAKE, CODEX, CLAUDE, GEMINI, OPENCODE], ids=lambda h: h.name)
def test_every_host_passes_the_kit(host: Host) -> None:
    assert run_host_conformance(host) == [c.__name__ for c in CONTRACTS]


def test_the_kit_catches_a_host_that_drops_a_deny() -> None:
    class Deaf(FakeHost):
        def encode(self, event: Event, name: str, answer: Answer) -> None:
            return None

    deaf = Deaf(handlers=FAKE.handlers)
    with pytest.raises(HostConformanceError, match="what_a_handler_answers_reaches_the_host"):
        run_host_conformance(deaf)
