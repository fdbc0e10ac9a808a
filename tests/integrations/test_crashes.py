"""A crash under a framework that keeps its own memory: the kill matrix.

For each framework with its own memory in use (the Agents SDK's ``SQLiteSession`` on its
Chat Completions model and on its default Responses model, pydantic-ai's
``message_history``, LangChain's ``SqliteSaver``; ``crash_child.py`` runs them), a child
process is killed with SIGKILL at each point of a run:

- ``mid-first-request``: the run's first request is in flight, and its prompt is the
  resume's ("continue": a prompt that got no answer, sent again, which is stored once);
- ``mid-request``: the model request after a tool's result is in flight (the server
  holds it until the process is dead);
- ``mid-tool``: the tool runs;
- ``after-result``: the tool's result reached the framework's memory, the next model
  call has not begun;
- ``after-new-context``: ``new_context`` ran (its outcome is kept in the session), its
  result is stored nowhere (neither the framework's memory nor ctxrelay's rows hold it);
- ``mid-seal``: ``new_context``'s result row is stored and the window not sealed yet
  (between the seal's two writes);
- ``after-seal``: the window is sealed, the fresh window's first request not sent.

Then a fresh process resumes the same session with the same memory, twice ("continue").
Each resume finishes; the dead process's lease (its TTL an hour) is taken over at once;
no request the server received carries a tool call without its result, exceeds the usable
limit or repeats an advisory; nothing is recorded twice; the framework's memory holds
nothing of ctxrelay's (no advisory, lead-in, trigger or interrupted answer).

The children are forked from one server process that imported the frameworks once
(``multiprocessing``'s forkserver), so each of the matrix's processes starts fresh
without paying the frameworks' imports again; the first run of each framework (the big
prompt) runs once and each case starts from a copy of its files.
"""

from __future__ import annotations

import importlib.util
import json
import multiprocessing
import shutil
import signal
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.integrations import Relay
from ctxrelay.runtime.estimate import DEFAULT_BYTES_PER_TOKEN, SAFETY_MARGIN
from ctxrelay.store import open_store
from ctxrelay.testing import Hold, OpenAIServer, Step, ToolUse, estimate_tokens
from tests.integrations import crash_child
from tests.integrations.crash_child import BUDGET, SESSION, SLOW_DONE, Args

# The first prompt is estimated (before any count of the provider's) between the warning's
# point and the handoff's: its request gets the warning, the request that carries slow's
# result gets the handoff.
assert BUDGET.warning_at is not None
assert BUDGET.handoff_target is not None
BIG = "x" * int(
    (BUDGET.warning_at + BUDGET.handoff_target) / 2 * DEFAULT_BYTES_PER_TOKEN / SAFETY_MARGIN
)
FIRST = f"Read this log: {BIG}"
KILLED = "Now do the slow part."
POINTS = [
    "mid-first-request",
    "mid-request",
    "mid-tool",
    "after-result",
    "after-new-context",
    "mid-seal",
    "after-seal",
]
#: The points where the kill run's tool is ``new_context`` (the resume opens window 2).
SEALING = ("after-new-context", "mid-seal", "after-seal")
#: What the agent wrote as its handoff notes before it asked for a fresh window.
NOTES = "Handoff: the slow part is next; the log was read."
#: Seconds a child may take to reach a point or to finish (a bound on a hang, not a wait).
PATIENCE = 180.0


@dataclass(frozen=True)
class Framework:
    name: str
    module: str
    extra: str


FRAMEWORKS = [
    Framework("openai-agents", "agents", "openai-agents"),
    Framework("openai-agents-responses", "agents", "openai-agents"),
    Framework("pydantic-ai", "pydantic_ai", "pydantic-ai"),
    Framework("langchain", "langgraph.checkpoint.sqlite", "langchain"),
]

_FORK = multiprocessing.get_context("forkserver")
_FORK.set_forkserver_preload(
    [
        "tests.integrations.crash_child",
        "openai",
        "agents",
        "pydantic_ai",
        "pydantic_ai.models.openai",
        "langchain.agents",
        "langchain_openai",
        "langgraph.checkpoint.sqlite",
    ]
)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


@dataclass
class Child:
    """A child process and its end of the pipe."""

    process: Any
    conn: Connection

    @classmethod
    def start(cls, args: Args) -> Child:
        mine, theirs = _FORK.Pipe()
        process = _FORK.Process(target=crash_child.main, args=(args, theirs), daemon=True)
        process.start()
        theirs.close()
        return cls(process, mine)

    def said(self, timeout: float) -> Any:
        """What the child sent within ``timeout`` seconds (``None``: nothing yet)."""
        if not self.conn.poll(timeout):
            return None
        try:
            return self.conn.recv()
        except EOFError:  # it died without a word
            self.process.join(PATIENCE)
            pytest.fail(f"the child died (exit code {self.process.exitcode})")

    def finish(self) -> tuple[list[str], list[str]]:
        """Its answers and the strings of the framework's memory, once it ends."""
        try:
            said = self.said(PATIENCE)
            assert said is not None, "the child did not finish"
            if said[0] == "failed":
                pytest.fail(f"the child failed:\n{said[1]}")
            self.process.join(PATIENCE)
            assert self.process.exitcode == 0
            return said[1], said[2]
        finally:
            self.close()

    def kill(self) -> None:
        self.process.kill()
        self.process.join(PATIENCE)
        assert self.process.exitcode == -signal.SIGKILL

    def close(self) -> None:
        if self.process.is_alive():
            self.process.kill()
            self.process.join(PATIENCE)
        self.conn.close()


def run(args: Args) -> tuple[list[str], list[str]]:
    return Child.start(args).finish()


@dataclass(frozen=True)
class Started:
    """A framework's session after its first run (the big prompt): its files, the
    request that run sent, and the arguments that run more of it."""

    files: Path
    body: Any
    args: Args


@pytest.fixture(scope="module", params=FRAMEWORKS, ids=lambda f: f.name)
def started(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Started:
    framework: Framework = request.param
    if not _installed(framework.module):
        if framework.name == "langchain":
            pytest.skip(
                "langgraph's SqliteSaver is not installed (pip install "
                "langgraph-checkpoint-sqlite); InMemorySaver does not outlive a killed process"
            )
        extra = framework.extra
        pytest.skip(f"{framework.name} is not installed (pip install 'ctxrelay[{extra}]')")
    root = tmp_path_factory.mktemp(framework.name)
    workspace = root / "ws"
    workspace.mkdir()
    (workspace / "README.md").write_text("# todo\n")
    files = root / "files"
    files.mkdir()
    with OpenAIServer([Step(text="Read it.")]) as server:
        args = Args(
            framework=framework.name,
            db=str(files / "relay.db"),
            memory=str(files / "memory"),
            workspace=str(workspace),
            base_url=server.base_url,
            prompts=(FIRST,),
        )
        answers, _ = run(args)
        (body,) = [r.body for r in server.requests]
    assert answers == ["Read it."]
    return Started(files, body, args)


def _copy(started: Started, into: Path) -> Args:
    into.mkdir()
    for f in started.files.iterdir():
        shutil.copy2(f, into / f.name)
    return replace(started.args, db=str(into / "relay.db"), memory=str(into / "memory"))


def _reach(child: Child, at: str, server: OpenAIServer, first: Hold | None) -> Hold | None:
    """Wait until ``child`` is at ``at`` and return the hold of the request in flight:
    ``first`` for ``mid-first-request``; for ``mid-request``, the request that follows the
    run's first (the one after the tool's result)."""
    if first is not None:
        _arrived(first, child, "the run's first request")
        if at == "mid-first-request":
            return first
        second = server.hold()  # queued before the first is answered: no race
        first.release()
        _arrived(second, child, "the request after the tool's result")
        return second
    said = child.said(PATIENCE)
    if said is not None and said[0] == "failed":
        pytest.fail(f"the child failed before {at}:\n{said[1]}")
    assert said == ("here", at), f"the child never reached {at}: {said}"
    return None


def _arrived(hold: Hold, child: Child, what: str) -> None:
    """Wait for the held request to arrive, failing at once if the child dies first."""
    deadline = time.monotonic() + PATIENCE
    while not hold.arrived.wait(0.05):
        assert child.process.is_alive(), f"{what} never arrived: {child.said(0)}"
        assert time.monotonic() < deadline, f"{what} never arrived"


def _lease(db: str) -> tuple[int, float] | None:
    with sqlite3.connect(db) as conn:
        got = conn.execute(
            "SELECT pid, expires_at FROM ctx_leases WHERE session_id = ?", (SESSION,)
        ).fetchone()
    conn.close()
    return None if got is None else (int(got[0]), float(got[1]))


def _killed_at(at: str, db: str) -> None:
    """The store as the kill at ``at`` left it: the process died where it was meant to."""
    store = open_store(db)
    try:
        windows = [w.seal_reason for w in store.windows(SESSION)]
        window = store.current_window(SESSION)
        rows = store.rows(SESSION, window_id=window.id)
        session = store.get_session(SESSION)
    finally:
        store.close()
    kinds = [r.kind for r in rows]
    if at == "after-seal":  # sealed; the fresh window holds its opening and nothing else
        assert windows == ["new_context", None]
        assert kinds == ["lead_in", "user"]
        return
    assert windows == [None]
    if at == "mid-first-request":  # its prompt is stored, and nothing after it
        assert rows[-1].kind == "user"
        assert rows[-1].text == "continue"
        return
    names = [r.metadata.get("name") for r in rows if r.kind == "tool_result"]
    # The kill run's reply (its tool call) is the last one stored: no answer came after.
    last = max(i for i, k in enumerate(kinds) if k == "assistant")
    assert kinds[last + 1] == "tool_call"
    assert rows[-1].kind != "assistant"
    if at == "after-new-context":  # the outcome is kept; no row answers the call yet
        assert names == []
        assert session.metadata.get("new_context") is not None
    elif at == "mid-seal":  # the seal's first write, not its second
        assert names == ["new_context"]
        assert rows[-1].metadata.get("new_context") is True
    elif at == "mid-request":  # the request after the result went out
        assert names == ["slow"]
    else:  # the tool ran, or its result is in the framework's memory only
        assert names == []


# ---- what a request carries, in either wire format -----------------------------------


def _unanswered(body: Any) -> list[str]:
    """The tool calls of a request (Chat Completions or Responses) that no result
    answers, and the results that answer no call."""
    calls: list[str] = []
    answered: list[str] = []
    for message in body.get("messages") or body.get("input") or []:
        for call in message.get("tool_calls") or []:
            calls.append(str(call["id"]))
        if message.get("role") == "tool":
            answered.append(str(message.get("tool_call_id")))
        if message.get("type") == "function_call":
            calls.append(str(message.get("call_id")))
        if message.get("type") == "function_call_output":
            answered.append(str(message.get("call_id")))
    return [c for c in calls if c not in answered] + [a for a in answered if a not in calls]


def _texts(body: Any) -> Iterator[str]:
    for message in body.get("messages") or body.get("input") or []:
        for key in ("content", "output"):
            content = message.get(key)
            if isinstance(content, str):
                yield content
            elif isinstance(content, list):
                yield from (str(p.get("text", "")) for p in content if isinstance(p, dict))


@pytest.mark.slow
@pytest.mark.parametrize("at", POINTS)
def test_a_killed_run_resumes_with_the_frameworks_memory(
    started: Started, tmp_path: Path, at: str
) -> None:
    sealing = at in SEALING
    tool = "new_context" if sealing else "slow"
    steps = [
        Step(text="Starting the slow part.", tool_calls=[ToolUse(tool)]),
        Step(text="Resumed and done."),
        Step(text="Still done."),
    ]
    with OpenAIServer(steps) as server:
        args = replace(_copy(started, tmp_path / "files"), base_url=server.base_url)
        if sealing:  # the agent's notes, which the fresh window opens with
            workspace = tmp_path / "ws"
            shutil.copytree(args.workspace, workspace)
            (workspace / "context-notes.md").write_text(NOTES)
            args = replace(args, workspace=str(workspace))
        first = server.hold() if at.startswith("mid-") and at.endswith("request") else None
        killed = "continue" if at == "mid-first-request" else KILLED
        child = Child.start(replace(args, prompts=(killed,), kill=at))
        try:
            held = _reach(child, at, server, first)
            child.kill()
        finally:
            child.close()
        if held is not None:  # the held request's client is gone: it took no step
            assert held.hung_up.wait(PATIENCE)
        _killed_at(at, args.db)
        # The dead process still holds the lease, for an hour unless taken over.
        lease = _lease(args.db)
        assert lease is not None
        assert lease[0] == child.process.pid
        assert lease[1] > time.time() + 600
        answers, memory = run(replace(args, prompts=("continue", "continue")))
        bodies = [started.body, *(r.body for r in server.requests)]

    assert answers == ["Resumed and done.", "Still done."]
    store = open_store(args.db)
    try:
        assert store.lease(SESSION) is None  # the resumes took it over and gave it up
        windows = store.windows(SESSION)
        rows = store.rows(SESSION)
    finally:
        store.close()
    advisories = [r for r in rows if r.kind == "warning"]
    lead_ins = [r for r in rows if r.kind == "lead_in"]
    # The first run's request, the kill run's, one for each resume; one more where a
    # request was in flight (the kill run's second, or the first resume's call of slow).
    assert len(bodies) == (5 if first is not None else 4)
    for body in bodies:
        assert _unanswered(body) == []
        assert estimate_tokens(body) <= BUDGET.usable_limit
        texts = list(_texts(body))
        for advisory in advisories:
            assert sum(advisory.text in t for t in texts if advisory.text) <= 1
        # The big prompt went out once per request of window 1, never in window 2:
        # nothing was recorded twice.
        fresh = any("[ctxrelay] This is context window 2" in t for t in texts)
        assert sum(BIG in t for t in texts) == (0 if fresh else 1)
    # Each advisory published once; each prompt stored once.
    stages = [(r.window_id, r.metadata.get("stage")) for r in advisories]
    assert len(stages) == len(set(stages))
    published = [str(r.metadata.get("stage")) for r in advisories]
    if not sealing and at != "mid-tool":  # slow's result passed the handoff's point
        assert published == ["warning", "handoff"]
        (handoff,) = [r.text or "" for r in advisories if r.metadata.get("stage") == "handoff"]
        # Published for the request that first carried slow's result (the one the kill
        # lost, mid-request), and sent (once) with every request from there on.
        sent = [i for i, b in enumerate(bodies) if any(handoff in t for t in _texts(b))]
        assert sent == list(range(3 if at == "mid-first-request" else 2, len(bodies)))
    else:
        assert published == ["warning"]
    prompts = [r.text for r in rows if r.kind == "user" and "trigger" not in r.metadata]
    # A prompt whose request was lost, sent again, is one prompt (as a retried dispatch).
    retried = at == "mid-first-request"
    assert prompts == [FIRST, killed, "continue"] + ([] if retried else ["continue"])
    results = [r for r in rows if r.kind == "tool_result"]
    if sealing:  # the seal completed on resume, or stood: window 2 is open either way
        assert [w.seal_reason for w in windows] == ["new_context", None]
        assert [r.metadata.get("name") for r in results] == ["new_context"]
        assert len(lead_ins) == 1
        assert any("[ctxrelay] This is context window 2" in t for t in _texts(bodies[-2]))
        # The fresh window started once and carries the notes once; window 1's items
        # are not sent in it (the big prompt, checked above, nor the kill run's call).
        window2 = [b for b in bodies if any("context window 2" in t for t in _texts(b))]
        assert len(window2) == 2  # the two resumes' requests
        assert [sum(NOTES in t for t in _texts(b)) for b in window2] == [1, 1]
        assert all(KILLED not in t for b in window2 for t in _texts(b))
    else:
        assert [w.seal_reason for w in windows] == [None]
        assert not lead_ins
        if at == "mid-tool":  # the result was lost: the call is answered as interrupted
            (result,) = results
            assert "slow was interrupted by a restart" in (result.text or "")
            assert "interrupted by a restart" in json.dumps(bodies[2])
        else:  # the framework or ctxrelay kept the result: it is the call's answer, once
            assert [r.text for r in results] == [SLOW_DONE]
    # The framework's memory holds its own conversation and nothing of ctxrelay's.
    assert any(BIG in m for m in memory)
    assert "Still done." in memory
    for held_text in memory:
        assert "[ctxrelay]" not in held_text
        assert "interrupted by a restart" not in held_text
        for r in [*advisories, *lead_ins]:
            assert not r.text or r.text not in held_text


# ---- the matching rule, without a framework -----------------------------------------


def _texts_stored(store: Any) -> list[str]:
    return [r.text or "" for r in store.rows("s1")]


@pytest.mark.parametrize(
    ("resent", "recorded"),
    [
        # a run given only new input: a repeated prompt is new, not an old row
        (["continue"], ["continue"]),
        # the framework's memory lost the stored tail (a crash): only what follows its
        # last match with a stored item is new
        (["task", "go on"], ["go on"]),
        # ... and an item ctxrelay never saw after that match is recorded once, in order
        (["task", "continue", "step 1", "a result", "go on"], ["a result", "go on"]),
        # the whole history with nothing lost: as before, after the last stored item
        (["task", "continue", "step 1", "step 2", "continue"], ["continue"]),
        # the last stored prompt got no answer (its request was lost) and the next run
        # sends the same text again: the retry is that prompt, recorded once, whether the
        # memory kept the first (Agents SDK) ...
        (["task", "continue", "step 1", "step 2", "step 2"], []),
        # ... or lost it (pydantic-ai, saved after each run), or there is no memory
        (["task", "continue", "step 1", "step 2"], []),
        (["step 2"], []),
    ],
)
def test_a_resent_history_is_matched_by_identity(
    tmp_path: Path, resent: list[str], recorded: list[str]
) -> None:
    from tests.integrations.test_runs import TextCodec

    store = open_store(tmp_path / "relay.db")
    try:
        relay = Relay(store, BUDGET, codec=TextCodec(), framework="test", session_id="s1")
        first = relay.begin()
        first.prepare(["task", "continue", "step 1", "step 2"])
        first.release()
        before = _texts_stored(store)
        second = relay.begin()
        second.prepare(resent)
        second.release()
        assert _texts_stored(store) == before + recorded
    finally:
        store.close()
