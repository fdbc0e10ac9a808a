"""Waiting on what a child process says or leaves, never on the clock (a deadline only
bounds a failure)."""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import time
from collections.abc import Callable, Mapping

STOPPING = "stopping after the current step"
"""What ``ctxrelay run`` writes to stderr when it takes the first Ctrl-C."""

CTXRELAY = [sys.executable, "-m", "ctxrelay"]
"""This environment's ``ctxrelay``, as a command line."""


def start_ctxrelay(*args: str, env: Mapping[str, str]) -> subprocess.Popen[str]:
    """``ctxrelay ARGS`` started as its own process, its stdout and stderr piped."""
    return subprocess.Popen(
        [*CTXRELAY, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(env),
    )


def run_ctxrelay(
    *args: str, env: Mapping[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``ctxrelay ARGS`` run as its own process to its end, its output captured."""
    return subprocess.run(
        [*CTXRELAY, *args],
        capture_output=True,
        text=True,
        env=dict(env),
        timeout=timeout,
        check=False,
    )


def read_stderr_until(proc: subprocess.Popen[str], text: str, timeout: float = 30.0) -> str:
    """Read ``proc``'s stderr until ``text`` appears in it, and return what was read (so
    the caller can add it to what ``communicate`` returns later). Fails when the stream
    ends or ``timeout`` seconds pass first."""
    assert proc.stderr is not None
    fd = proc.stderr.fileno()  # read below the text layer: nothing stays buffered there
    seen = b""
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while text.encode() not in seen:
            if not selector.select(timeout):
                raise AssertionError(f"no {text!r} on stderr within {timeout} s: {seen!r}")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AssertionError(f"stderr ended before {text!r}: {seen!r}")
            seen += chunk
    return seen.decode()


def wait_until(done: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Check ``done()`` (observable state: a recorded request, a logged line) until it
    holds; fail naming ``what`` when ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout} s")
        time.sleep(0.02)
