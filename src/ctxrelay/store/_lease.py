"""The session lease's rule and its holding: who this process is, whether a holder on
this machine still lives, and a held lease renewed while its run lasts.

The store (``_base.py``) applies the rule in one transaction per acquisition; this module
owns what "a holder died" means, so every backend and every host of a run (the runtime's
dispatch lock, the framework integrations) shares it:

- a lease lapses at ``expires_at`` unless renewed: the rule for every holder, on any
  machine (the store's clock decides, so clocks of workers do not need to agree);
- a lease held by a process of this machine's process namespace whose ``pid`` no longer
  exists (or is a zombie) is taken over at once, without waiting for it to lapse. A pid
  that was reused only makes the acquirer wait for the expiry, never take over a live
  holder; outside Linux, where the namespace cannot be named, only expiry applies.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import threading

from ctxrelay.errors import SessionInUseError, StoreError
from ctxrelay.store._protocol import LEASE_TTL_S, Lease, Store

__all__ = ["Holding", "hold_lease", "holder_alive", "this_host", "this_node"]


def this_host() -> str:
    """This machine's name, for messages."""
    return socket.gethostname() or "localhost"


@functools.cache
def this_node() -> str:
    """The process namespace this process's pids belong to: host name, boot id and PID
    namespace on Linux (two containers or two machines never share one), else ``""``."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as fh:
            boot = fh.read().strip()
        pidns = os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""
    return f"{this_host()}/{boot}/{pidns}"


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, under another user
    try:  # a zombie has exited; only its parent has not reaped it yet
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rpartition(")")[2].split()[:1] != ["Z"]
    except OSError:
        return True


def holder_alive(lease: Lease, now: float) -> bool:
    """Whether ``lease`` still binds at ``now`` (the store's clock)."""
    if lease.expires_at <= now:
        return False
    return not (lease.node and lease.node == this_node() and not _pid_alive(lease.pid))


class Holding:
    """A lease held by a run: a daemon thread renews it every third of ``ttl`` until
    :meth:`release`. If another holder took it over meanwhile (this process stalled past
    the expiry), :meth:`check` raises the ``SessionInUseError`` that says so."""

    def __init__(self, store: Store, lease: Lease, ttl: float) -> None:
        self.store = store
        self.lease = lease
        self.ttl = ttl
        self.lost: SessionInUseError | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._beat, name=f"ctxrelay-lease-{lease.session_id[:12]}", daemon=True
        )
        self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                self.lease = self.store.renew_lease(self.lease, ttl=self.ttl)
            except SessionInUseError as exc:
                self.lost = exc
                return
            except StoreError:
                continue  # the store is away for a moment: the next beat tries again

    @property
    def released(self) -> bool:
        return self._stop.is_set()

    def check(self) -> None:
        """Raise ``SessionInUseError`` when the lease was lost to another holder."""
        if self.lost is not None:
            raise self.lost

    def release(self) -> None:
        """Stop renewing and give the lease up (once; later calls do nothing)."""
        if self._stop.is_set():
            return
        self._stop.set()
        if threading.current_thread() is not self._thread:
            self._thread.join()
        if self.lost is None:
            with contextlib.suppress(StoreError):  # unreachable store: it lapses instead
                self.store.release_lease(self.lease)


def hold_lease(
    store: Store,
    session_id: str,
    *,
    timeout: float = 0.0,
    ttl: float = LEASE_TTL_S,
    label: str = "",
) -> Holding:
    """Acquire the session's lease (as :meth:`Store.acquire_lease`) and keep it renewed
    until the returned holding is released."""
    lease = store.acquire_lease(session_id, ttl=ttl, timeout=timeout, label=label)
    return Holding(store, lease, ttl)
