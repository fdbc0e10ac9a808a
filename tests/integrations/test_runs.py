"""A relay's runs, without a framework: each holds the session's lease, waits for it
without blocking its event loop, notices when it lost it, and gives it up."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.budget import Budget
from ctxrelay.errors import SessionBusyError, SessionInUseError, StoreError
from ctxrelay.integrations import ItemRow, Relay
from ctxrelay.store import Store, open_store

BUDGET = Budget(limit=200_000, output_reserve=32_000, threshold=60)


class TextCodec:
    """Items are plain strings: user messages."""

    def key(self, item: Any) -> str:
        return f"user:{item}"

    def describe(self, item: Any) -> Sequence[ItemRow]:
        return [ItemRow("user", str(item))]

    def dump(self, item: Any) -> Any:
        return item

    def load(self, raw: Any) -> Any:
        return raw

    def text_message(self, texts: Sequence[str]) -> Any:
        return "\n".join(texts)

    def tool_output(self, call_id: str, name: str, text: str) -> Any:
        return text


def _relay(store: Store, **options: Any) -> Relay:
    return Relay(store, BUDGET, codec=TextCodec(), framework="test", session_id="s1", **options)


def test_the_relay_holds_no_run_state(store: Store) -> None:
    relay = _relay(store)
    assert store.lease("s1") is None  # opening a relay takes nothing
    first = relay.begin()
    first.prepare(["hello"])
    first.release()
    second = relay.begin()
    # The second run starts from the store: it sees the first run's row.
    assert [r.text for r in second._rows] == ["hello"]
    assert second.lease.token != first.lease.token
    second.release()


def test_a_waiting_coroutine_leaves_the_loop_to_the_holder(store: Store) -> None:
    relay = _relay(store, wait=60)

    async def go() -> None:
        first = await relay.begin_async()
        waiting = asyncio.ensure_future(relay.begin_async())
        await asyncio.sleep(0)  # it has tried once, found the lease held, and yielded
        assert not waiting.done()
        first.release()
        second = await waiting
        assert store.lease("s1") == second.lease
        second.release()

    asyncio.run(go())


def test_a_run_that_lost_its_lease_sends_nothing_more(store: Store, tmp_path: Path) -> None:
    relay = _relay(store, lease_ttl=0.3)
    run = relay.begin()
    run.prepare(["one"])
    # Another holder takes over (as after this process stalled past the expiry).
    other = open_store(tmp_path / "relay.db")  # the store fixture's file
    try:
        store.release_lease(run.lease)
        taken = other.acquire_lease("s1", label="other")
        deadline = time.monotonic() + 60
        while run._holding.lost is None:  # until the run's next renewal has seen it
            assert time.monotonic() < deadline, "the run never noticed"
            time.sleep(0.01)
        with pytest.raises(SessionInUseError, match="lost session 's1' to pid") as caught:
            run.prepare(["two"])
        assert caught.value.lost
        assert caught.value.holder == taken.holder
        assert [r.text for r in store.rows("s1")] == ["one"]
        other.release_lease(taken)
    finally:
        other.close()


def test_close_gives_up_every_lease_of_the_relay(store: Store) -> None:
    relay = _relay(store)
    run = relay.begin()
    assert store.lease("s1") == run.lease
    relay.close()
    assert store.lease("s1") is None
    assert run.released
    # A run called on after its release takes the lease again.
    run.prepare(["again"])
    assert store.lease("s1") is not None
    run.release()


def test_the_error_is_a_store_error_under_its_earlier_name_too(store: Store) -> None:
    relay = _relay(store)
    run = relay.begin()
    with pytest.raises(SessionBusyError) as caught:
        relay.begin()
    assert isinstance(caught.value, StoreError)
    assert caught.value.holder == run.lease.holder
    run.release()


def test_two_threads_one_relay_one_driver(store: Store) -> None:
    relay = _relay(store)
    held, done = threading.Event(), threading.Event()
    caught: list[BaseException] = []

    def first() -> None:
        run = relay.begin()
        run.prepare(["from the first thread"])
        held.set()
        done.wait(60)
        run.release()

    def second() -> None:
        held.wait(60)
        try:
            relay.begin()
        except SessionInUseError as exc:
            caught.append(exc)
        finally:
            done.set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    (error,) = caught
    assert isinstance(error, SessionInUseError)
    assert "(test)" in str(error)
    assert store.lease("s1") is None
    assert [r.text for r in store.rows("s1")] == ["from the first thread"]
