"""Waiting on what a child process says, never on the clock."""

from __future__ import annotations

import os
import selectors
import subprocess

STOPPING = "stopping after the current step"
"""What ``ctxrelay run`` writes to stderr when it takes the first Ctrl-C."""


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
