"""Child-process bodies for the race and crash tests (module-level so any start method
can run them). Each opens its own store handle: nothing is shared with the parent but
the database itself."""

from __future__ import annotations

import os
import time
from typing import Any

from ctxrelay.errors import SessionInUseError
from ctxrelay.store import NewRow, open_store

STAGES = ("warning", "handoff")
BATCH = 3  # rows per batch in the crash writer: boundary, lead-in, triggering message


def claim_racer(target: str, windows: list[tuple[str, str]], barrier: Any, out: Any) -> None:
    """Race for every (window, stage); report what this process won."""
    store = open_store(target)
    won: list[tuple[str, str, int]] = []
    barrier.wait()
    for session_id, window_id in windows:
        for stage in STAGES:
            row = store.append_advisory(
                session_id,
                window_id,
                stage,
                NewRow("warning", f"{stage} by {os.getpid()}", {"stage": stage}),
            )
            if row is not None:
                won.append((window_id, stage, row.id))
    store.close()
    out.put((os.getpid(), won))


def lock_holder(target: str, session_id: str, rounds: int, barrier: Any, out: Any) -> None:
    """Take the dispatch lock ``rounds`` times; inside, write enter/exit rows with a pause
    between, so an overlap of two holders shows as two enters in a row."""
    store = open_store(target)
    window = store.current_window(session_id).id
    me = str(os.getpid())
    barrier.wait()
    busy = 0
    for _ in range(rounds):
        while True:
            try:
                with store.dispatch_lock(session_id, timeout=0.05):
                    store.append(session_id, window, [NewRow("user", "enter", {"pid": me})])
                    time.sleep(0.003)
                    store.append(session_id, window, [NewRow("assistant", "exit", {"pid": me})])
                break
            except SessionInUseError:
                busy += 1
    store.close()
    out.put((me, busy))


def crash_writer(target: str, session_id: str, start: int, ack_fd: int) -> None:
    """Write atomic batches forever until killed: odd batches are rollovers (boundary in
    the old window, lead-in and trigger in the new one), even ones plain appends plus an
    advisory claim. After each commit, acknowledge the batch number on ``ack_fd``."""
    store = open_store(target)
    os.write(ack_fd, b"ready\n")
    batch = start
    while True:
        batch += 1
        meta = {"batch": batch}
        window = store.current_window(session_id)
        if batch % 2:
            store.rollover(
                session_id,
                window.id,
                "forced",
                boundary=NewRow("boundary", None, {**meta, "part": 0}),
                opening=[
                    NewRow("lead_in", "lead-in " + "x" * 2000, {**meta, "part": 1}),
                    NewRow("user", "trigger", {**meta, "part": 2}),
                ],
            )
        else:
            store.append(
                session_id,
                window.id,
                [NewRow("tool_result", "y" * 3000, {**meta, "part": p}) for p in range(BATCH)],
            )
            store.append_advisory(
                session_id, window.id, "warning", NewRow("warning", "w", {**meta, "part": -1})
            )
        os.write(ack_fd, f"{batch}\n".encode())


def lock_and_hang(target: str, session_id: str, ready_fd: int) -> None:
    """Take the dispatch lock, say so, and hang until killed."""
    store = open_store(target)
    with store.dispatch_lock(session_id):
        os.write(ready_fd, b"locked\n")
        time.sleep(600)
