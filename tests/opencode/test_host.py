"""The OpenCode host's wire: the answer the plugin executes, the events it forwards, the
hook command's event word, and the plugin install writes."""

from __future__ import annotations

import io
import json
import re
import sqlite3
from pathlib import Path
from typing import get_type_hints

import pytest

from ctxrelay.errors import ConfigError
from ctxrelay.hooks.host import Answer, Event
from ctxrelay.opencode import _payloads
from ctxrelay.opencode.hook import main
from ctxrelay.opencode.host import OPENCODE
from ctxrelay.opencode.setup.plugin import EVENTS_MARK, HOOK_MARK, render, source
from ctxrelay.opencode.setup.probe import sample_payload
from ctxrelay.transcripts import session_locator
from tests.conftest import PROJECT
from tests.transcripts._opencode_db import (
    add_message,
    add_session,
    assistant,
    create,
    tokens,
    user,
)


def test_each_answer_word_reaches_the_plugin_where_the_event_carries_it() -> None:
    call, done, end = Event.TOOL_CALL, Event.TOOL_DONE, Event.TURN_END
    assert OPENCODE.encode(call, "tool.execute.before", Answer(deny="no")) == {"deny": "no"}
    assert OPENCODE.encode(done, "tool.execute.after", Answer(deny="no")) is None
    assert OPENCODE.encode(done, "tool.execute.after", Answer(context="c")) == {"context": "c"}
    assert OPENCODE.encode(end, "session.idle", Answer(prompt="p")) == {"prompt": "p"}
    fresh = OPENCODE.encode(end, "session.idle", Answer(prompt="p", clear=True, notice="n"))
    assert fresh == {"prompt": "p", "fresh": True, "notice": "n"}
    assert OPENCODE.encode(call, "tool.execute.before", Answer(prompt="p")) is None


def test_the_answer_shape_is_the_wires() -> None:
    keys = set(get_type_hints(_payloads.OpenCodeAnswer))
    said = OPENCODE.encode(
        Event.TURN_END, "session.idle", Answer(context="c", prompt="p", clear=True, notice="n")
    )
    assert said is not None
    assert set(said) | {"deny"} == keys


def test_the_plugin_reads_every_answer_word_and_sends_every_event() -> None:
    plugin = source()
    for word in get_type_hints(_payloads.OpenCodeAnswer):
        assert f"answer.{word}" in plugin or f"answer?.{word}" in plugin, word
    for name in _payloads.EVENT_NAMES:
        assert f'"{name}"' in plugin, name
    assert set(OPENCODE.handlers) <= set(_payloads.EVENT_NAMES)


def test_the_plugin_imports_no_package() -> None:
    imports = re.findall(r'^import .* from "([^"]+)"', source(), re.MULTILINE)
    assert imports
    assert all(name.startswith("node:") for name in imports)


def test_install_fills_in_the_command_and_the_events() -> None:
    text = render("'/opt/my env/bin/python' -I -m ctxrelay.opencode.hook")
    assert HOOK_MARK not in text
    assert EVENTS_MARK not in text
    assert '["/opt/my env/bin/python", "-I", "-m", "ctxrelay.opencode.hook"]' in text
    assert json.dumps(sorted(OPENCODE.handlers)) in text
    with pytest.raises(ConfigError, match="cannot be split"):
        render("'unclosed")


def test_the_hook_takes_the_event_from_its_command_line(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x" * 300_000)
    payload = sample_payload("tool.execute.before", tmp_path)
    del payload["hook_event_name"]
    out = io.StringIO()
    main(["tool.execute.before"], io.StringIO(json.dumps(payload)), out)
    assert json.loads(out.getvalue())["deny"].startswith("ctxrelay guard:")
    out = io.StringIO()
    main(["session.idle"], io.StringIO(json.dumps(payload)), out)
    assert out.getvalue() == ""


def test_the_docs_table_names_every_event_of_the_wire() -> None:
    page = (PROJECT / "docs" / "opencode.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([a-z.]+)` \|", page, re.MULTILINE))
    assert rows == set(_payloads.EVENT_NAMES)
    for word in get_type_hints(_payloads.OpenCodeAnswer):
        assert f"`{word}`" in page, word


def test_a_session_has_started_from_a_handoff_once_a_response_followed_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "opencode.db"
    with create(db) as c:
        add_session(c, "ses_new", str(tmp_path), 1000)
        add_message(c, "msg_u", "ses_new", user(1001), 1001)
        brief = {"type": "text", "text": "Continue from .ctxrelay/handoffs/h-1.md"}
        c.execute(
            "INSERT INTO part VALUES ('prt_1', 'msg_u', 'ses_new', 1001, 1001, ?)",
            (json.dumps(brief),),
        )
    ref = session_locator(db, "ses_new")
    handoff = tmp_path / "h-1.md"
    assert not OPENCODE.started(ref, handoff)  # asked, no response yet: a crash loses nothing
    with sqlite3.connect(db) as c:
        add_message(c, "msg_a", "ses_new", assistant(1002, tokens(700, 9)), 1002)
    assert OPENCODE.started(ref, handoff)
    assert not OPENCODE.started(ref, tmp_path / "h-2.md")
    assert not OPENCODE.started(session_locator(db, "ses_other"), handoff)
    assert not OPENCODE.started(str(db), handoff)
