"""One driver per session, for every integration: each run holds the session's lease.

Over real HTTP from each framework's own loop, against a local wire server: a second
run of a session, as another task of the same process or as another process, fails at
once with ``SessionInUseError`` (one line from a CLI, no traceback) while the first
completes; a run that asks to wait goes after the first, never beside it; a holder killed
with SIGKILL is taken over by the next run; and no interleaving sends a request above the
usable limit. A gate tool holds the first run open until the test has seen the second's
outcome, so nothing here waits for time.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget import Budget
from ctxrelay.errors import SessionInUseError
from ctxrelay.runtime.tools import ToolContext, ToolResult
from ctxrelay.store import Store, open_store
from ctxrelay.testing import Step, ToolUse, estimate_tokens
from tests.integrations.harness import Harness

BUDGET = Budget(limit=200_000, output_reserve=32_000, threshold=60)
PROJECT = Path(__file__).resolve().parents[2]


class Gate:
    """A tool that holds its run open: it says it was entered, then waits to be opened."""

    name = "gate"
    description = "Wait at the gate."
    replay_safe = True

    def __init__(self) -> None:
        self.input_schema: dict[str, Any] = {"type": "object", "properties": {}}
        self.entered = asyncio.Event()
        self.opened = asyncio.Event()

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        self.entered.set()
        await self.opened.wait()
        return ToolResult("the gate opened")


def _gated_steps(first: str = "Done.") -> list[Step]:
    return [
        Step(text="Waiting at the gate.", tool_calls=[ToolUse("gate")], input_tokens=1_000),
        Step(text=first, input_tokens=1_100),
    ]


def _prompts(server: Any) -> list[str]:
    return [json.dumps(r.body, ensure_ascii=False) for r in server.requests if r.body]


# Each run talks to a server of its own: a framework may share one HTTP client between
# runs against the same address, and the harness closes a run's client at its end.


@pytest.mark.parametrize("relays", ["one relay", "two relays"])
def test_a_second_task_fails_at_once_while_the_first_completes(
    harness: Harness, store: Store, workspace: Path, relays: str
) -> None:
    first = harness.open(store, session_id="s1", budget=BUDGET, workspace=workspace)
    gate = Gate()
    harness.add_tool(first, gate)
    second = (
        first
        if relays == "one relay"
        else harness.open(store, session_id="s1", budget=BUDGET, workspace=workspace)
    )
    caught: list[SessionInUseError] = []

    async def both(server: Any, other: Any) -> str:
        async def late() -> None:
            await gate.entered.wait()  # the first run holds the lease and is at its tool
            try:
                await harness.run(second, other, "A second driver.")
            except SessionInUseError as exc:
                caught.append(exc)
            finally:
                gate.opened.set()

        answer, _ = await asyncio.gather(harness.run(first, server, "The first driver."), late())
        return answer

    with harness.server(_gated_steps()) as server, harness.server([]) as other:
        answer = asyncio.run(both(server, other))
    assert answer == "Done."
    (error,) = caught
    assert error.session_id == "s1"
    assert error.holder == f"pid {os.getpid()} on {socket.gethostname()} ({first.FRAMEWORK})"
    assert f"session 's1' is in use by {error.holder} since " in str(error)
    assert "\n" not in str(error)
    # The first run sent its two requests; the second sent nothing and stored nothing.
    assert len(_prompts(server)) == 2
    assert other.requests == []
    assert not any("A second driver" in (r.text or "") for r in store.rows("s1"))
    assert store.lease("s1") is None  # the first run gave it up at its end


def test_a_task_that_waits_goes_after_the_first(
    harness: Harness, store: Store, workspace: Path
) -> None:
    first = harness.open(store, session_id="s1", budget=BUDGET, workspace=workspace, wait=60)
    gate = Gate()
    harness.add_tool(first, gate)

    async def both(server: Any, other: Any) -> list[str]:
        async def late() -> str:
            await gate.entered.wait()
            task = asyncio.ensure_future(harness.run(first, other, "A second driver."))
            await asyncio.sleep(0)  # the second run has started; it cannot overtake
            gate.opened.set()
            return await task

        answers = await asyncio.gather(harness.run(first, server, "The first driver."), late())
        return list(answers)

    with (
        harness.server(_gated_steps("First done.")) as server,
        harness.server([Step(text="Second done.", input_tokens=1_300)]) as other,
    ):
        answers = asyncio.run(both(server, other))
    assert answers == ["First done.", "Second done."]
    assert len(_prompts(server)) == 2
    (after,) = _prompts(other)
    # The second driver's prompt went out after the first run's whole conversation, in
    # the same window.
    assert "the gate opened" in after
    assert "First done." in after
    assert "A second driver" in after
    texts = [r.text or "" for r in store.rows("s1")]
    assert texts.index("A second driver.") > texts.index("First done.")


def test_no_interleaving_sends_a_request_above_the_usable_limit(
    harness: Harness, store: Store, workspace: Path
) -> None:
    # Three runs, each about two thirds of the usable limit: two merged into one request
    # would exceed it. One fails at once; one that waits goes after, in a fresh window.
    small = Budget(limit=40_000, output_reserve=8_000, threshold=60)
    big = "x" * (small.usable_limit * 4 * 2 // 3)
    fail = harness.open(store, session_id="s1", budget=small, workspace=workspace)
    wait = harness.open(store, session_id="s1", budget=small, workspace=workspace, wait=60)
    gate = Gate()
    harness.add_tool(fail, gate)
    outcomes: list[str] = []

    async def three(servers: list[Any]) -> None:
        async def others() -> None:
            await gate.entered.wait()
            try:
                await harness.run(fail, servers[1], f"Second {big}")
            except SessionInUseError:
                outcomes.append("second refused")
            third = asyncio.ensure_future(harness.run(wait, servers[2], f"Third {big}"))
            await asyncio.sleep(0)
            gate.opened.set()
            outcomes.append(await third)

        await asyncio.gather(harness.run(fail, servers[0], f"First {big}"), others())

    steps = [
        [Step(text="Waiting at the gate.", tool_calls=[ToolUse("gate")]), Step(text="First.")],
        [],
        [Step(text="Third done.")],
    ]
    with (
        harness.server(steps[0]) as one,
        harness.server(steps[1]) as two,
        harness.server(steps[2]) as three_,
    ):
        asyncio.run(three([one, two, three_]))
    assert outcomes == ["second refused", "Third done."]
    assert [len(s.requests) for s in (one, two, three_)] == [2, 0, 1]
    for server in (one, three_):
        for request in server.requests:
            assert estimate_tokens(request.body) <= small.usable_limit
    # The third went after the first in a fresh window (the limit rolled it over).
    seals = [w.seal_reason for w in store.windows("s1")]
    assert seals[-1] is None
    assert "forced" in seals


# ---- other processes ---------------------------------------------------------------

_CHILD = """
import asyncio, json, os, sys
from pathlib import Path
from ctxrelay.cli._common import handle_errors
from ctxrelay.runtime.tools import ToolResult
from ctxrelay.store import open_store
from tests.integrations.harness import HARNESSES
from tests.integrations.test_concurrency import BUDGET

args = json.loads(sys.argv[1])
harness = next(h for h in HARNESSES if h.name == args["harness"])

class Gate:
    name = "gate"
    description = "Wait at the gate."
    replay_safe = True
    input_schema = {"type": "object", "properties": {}}
    async def run(self, _args, ctx):
        os.write(args["ready_fd"], b"entered\\n")
        await asyncio.to_thread(sys.stdin.readline)  # until the test says go on
        return ToolResult("the gate opened")

class Remote:
    base_url = args["base_url"]

@handle_errors
def main(argv):
    store = open_store(args["db"])
    integration = harness.open(store, session_id="s1", budget=BUDGET, workspace=Path(args["ws"]))
    harness.add_tool(integration, Gate())
    print(asyncio.run(harness.run(integration, Remote(), args["prompt"])))
    return 0

sys.exit(main([]))
"""


def _child(
    harness: Harness, db: Path, ws: Path, base_url: str, *, prompt: str, fd: int
) -> list[str]:
    arg = {
        "harness": harness.name,
        "db": str(db),
        "ws": str(ws),
        "base_url": base_url,
        "prompt": prompt,
        "ready_fd": fd,
    }
    return [sys.executable, "-c", _CHILD, json.dumps(arg)]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(PROJECT)}


def _entered(read_fd: int, proc: subprocess.Popen[str]) -> None:
    """Wait until the child's run is at its gate (or the child died first)."""
    ready, _, _ = select.select([read_fd], [], [], 120)
    assert ready, "the first run never reached its gate"
    assert os.read(read_fd, 64) == b"entered\n", proc.poll()


def _holder(
    harness: Harness, db: Path, workspace: Path, base_url: str, *, fd: int, output: int
) -> subprocess.Popen[str]:
    """The first driver, in a child process that reports on ``fd`` once its tool runs."""
    return subprocess.Popen(
        _child(harness, db, workspace, base_url, prompt="The first driver.", fd=fd),
        cwd=PROJECT,
        env=_env(),
        stdin=subprocess.PIPE,
        stdout=output,
        stderr=output,
        text=True,
        pass_fds=(fd,),
    )


@pytest.mark.slow
def test_a_second_process_fails_at_once_with_one_line(
    harness: Harness, tmp_path: Path, workspace: Path
) -> None:
    db = tmp_path / "two.db"
    read_fd, write_fd = os.pipe()
    with harness.server(_gated_steps("First done.")) as server:
        with _holder(
            harness, db, workspace, server.base_url, fd=write_fd, output=subprocess.PIPE
        ) as holder:
            try:
                _entered(read_fd, holder)
                second = subprocess.run(
                    _child(
                        harness,
                        db,
                        workspace,
                        server.base_url,
                        prompt="A second driver.",
                        fd=write_fd,
                    ),
                    cwd=PROJECT,
                    env=_env(),
                    capture_output=True,
                    text=True,
                    check=False,
                    timeout=120,
                    pass_fds=(write_fd,),
                )
                out, err = holder.communicate("go on\n", timeout=120)
            finally:
                os.close(read_fd)
                os.close(write_fd)
                if holder.poll() is None:
                    holder.kill()
        assert holder.returncode == 0, err
        assert out.strip() == "First done."
        assert second.returncode == 1
        assert second.stdout == ""
        assert "Traceback" not in second.stderr
        lines = second.stderr.splitlines()
        assert len(lines) == 1, second.stderr
        assert f"session 's1' is in use by pid {holder.pid} on " in lines[0]
        assert " since " in lines[0]
        prompts = _prompts(server)
    assert len(prompts) == 2
    assert not any("A second driver" in p for p in prompts)


@pytest.mark.slow
def test_a_killed_holder_is_taken_over_by_the_next_run(
    harness: Harness, tmp_path: Path, workspace: Path
) -> None:
    db = tmp_path / "kill.db"
    read_fd, write_fd = os.pipe()
    steps = [_gated_steps()[0], Step(text="Taken over and done.", input_tokens=1_200)]
    with harness.server(steps) as server:
        with _holder(
            harness, db, workspace, server.base_url, fd=write_fd, output=subprocess.DEVNULL
        ) as holder:
            try:
                _entered(read_fd, holder)
                store = open_store(db)
                held = store.lease("s1")
                assert held is not None
                assert held.pid == holder.pid
                holder.send_signal(signal.SIGKILL)
                assert holder.wait(60) == -signal.SIGKILL
            finally:
                os.close(read_fd)
                os.close(write_fd)
                if holder.poll() is None:
                    holder.kill()
        try:
            # Its lease row is still there and would not lapse for a while, but its
            # holder's pid is gone from this machine: it binds no more, and the next
            # run takes it over at once.
            assert store.lease("s1") is None
            integration = harness.open(store, session_id="s1", budget=BUDGET, workspace=workspace)
            answer = asyncio.run(harness.run(integration, server, "Go on."))
            assert store.lease("s1") is None
            rows = store.rows("s1")
        finally:
            store.close()
        prompts = _prompts(server)
    assert answer == "Taken over and done."
    assert len(prompts) == 2
    assert "gate was interrupted by a restart" in prompts[1]
    assert [r.text for r in rows if r.kind == "user"][-1] == "Go on."
