"""Durable state of the coding-agent hooks: small JSON documents, safe under concurrent hooks.

A host runs one hook process per event, often several at once (parallel tool calls, a
subagent's hooks next to the main thread's, Claude Code's statusline every few seconds).
What one hook learns and the next must know lives here.

**Where.** What belongs to one person's sessions lives in the user's state directory:
``$CTXRELAY_STATE_DIR`` if set, else ``$XDG_STATE_HOME/ctxrelay``, else
``~/.local/state/ctxrelay`` (:func:`state_root`). Each host keeps its documents in a folder
of its own (:func:`host_dir`: ``claude/``, ``codex/``), keyed by the host's session id.
What belongs to the handoff files lives beside them, in the project
(``.ctxrelay/handoff/chain.json``, :func:`project_state`): which handoff was written by
whom, reserved, offered, started from or dropped, and so the chain. It goes wherever the
files go (another HOME, another machine, a CI checkout, a commit), so no session anywhere
is offered a handoff another has used. Each state directory has an id of its own
(:func:`owner`, random, no name in it): the project's records say whose sessions reserved
or wrote each handoff, so a fresh start offers only its own person's handoffs.

**How.** One file ``<name>.json`` per document and a lock file ``<name>.lock`` beside
it. :meth:`StateFile.update` takes an exclusive ``fcntl.flock`` on the lock file, reads,
applies a function, and replaces the document atomically (write a temp file, fsync,
``os.replace``), so a reader never sees half a document and two hooks never lose each
other's update. A missing or unreadable document reads as ``{}``: hooks fail open, and the
next update rewrites it whole.

**Upgrades.** A document the previous layout kept elsewhere (Codex's under
``claude/codex-sessions/`` and ``claude/codex-reads/``) is moved to its place the first time
it is asked for (:func:`adopt`); a project's records the user's state directory kept
(``projects/<digest>.json``, before that ``claude/projects/``) are merged into the
project's ``chain.json`` and removed, once (:func:`project_state`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ctxrelay.errors import CtxrelayError

T = TypeVar("T")

__all__ = [
    "HANDOFF_DIR",
    "LOCK_TIMEOUT_S",
    "MAX_LIST_ITEMS",
    "ONCE",
    "PROJECT_RECORDS",
    "StateFile",
    "StateLockError",
    "adopt",
    "claim",
    "forget_reads",
    "host_dir",
    "is_plain",
    "owner",
    "project_key",
    "project_state",
    "read_document",
    "reads_dir",
    "safe_name",
    "session_doc_path",
    "session_state",
    "shared_state",
    "state_root",
    "update_document",
]

HANDOFF_DIR = Path(".ctxrelay") / "handoff"
"""Where handoff files go, relative to the project directory."""

PROJECT_RECORDS = "chain.json"
"""The project's handoff records, in :data:`HANDOFF_DIR` beside the files."""

LOCK_TIMEOUT_S = 5.0
"""Longest wait for another hook's lock; then the hook fails open rather than hang."""

MAX_LIST_ITEMS = 100
"""Cap of a list kept by :meth:`StateFile.append`, so a stuck consumer cannot grow a
document without bound (oldest items are dropped first)."""

ONCE = "once"
"""The default group of :meth:`StateFile.claim_once`'s flags; :meth:`StateFile.reset` of it
(or :func:`claim`'s caller dropping it) starts them over, e.g. when an episode ends."""

_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
_MAX_NAME = 96


class StateLockError(CtxrelayError):
    """Another process held a state document's lock for too long."""


# -- where things are -----------------------------------------------------------------


def state_root() -> str:
    """``$CTXRELAY_STATE_DIR``, else ``$XDG_STATE_HOME/ctxrelay`` (absolute values only),
    else ``~/.local/state/ctxrelay``."""
    explicit = os.environ.get("CTXRELAY_STATE_DIR")
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_STATE_HOME")
    base = (
        xdg
        if xdg and os.path.isabs(xdg)
        else os.path.join(os.path.expanduser("~"), ".local", "state")
    )
    return os.path.join(base, "ctxrelay")


def host_dir(host: str) -> str:
    """The folder of one host's documents (``host`` is its plain name: ``claude``)."""
    return os.path.join(state_root(), safe_name(host))


def safe_name(name: str) -> str:
    """A file-name-safe form of ``name``; ids from payloads are never trusted as paths.

    Plain ids (UUIDs, agent ids) stay readable; anything else becomes a hash."""
    if 0 < len(name) <= _MAX_NAME and all(c in _SAFE for c in name) and not name.startswith("."):
        return name
    return "h-" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def is_plain(name: object) -> bool:
    """A payload id that can be a file name as it is (UUIDs, agent ids)."""
    return isinstance(name, str) and 0 < len(name) <= 128 and all(c in _PLAIN for c in name)


def reads_dir(host: str, session_id: str) -> str | None:
    """The folder of one session's re-read records (one per agent) of ``host``; ``None``
    when the id is not a plain name."""
    if not is_plain(session_id):
        return None
    return os.path.join(host_dir(host), "reads", session_id)


def forget_reads(host: str, session_id: str) -> None:
    """The window ended (a clear, a compaction, the work moved to a fresh session): what
    the session read is gone from its context, so its re-read records go."""
    folder = reads_dir(host, session_id)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def session_doc_path(host: str, session_id: str) -> str:
    """The JSON document of one session of ``host``."""
    return os.path.join(host_dir(host), "sessions", safe_name(session_id) + ".json")


def adopt(path: str, legacy: str) -> str:
    """``path``, after moving the previous layout's document ``legacy`` there if only
    that one exists (once: a rename, atomic; a racing hook that lost finds it moved)."""
    if not os.path.exists(path) and os.path.exists(legacy):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            os.replace(legacy, path)
    return path


def read_document(path: str) -> dict[str, Any]:
    """A state document as it is now (``{}`` when missing or unreadable), without a lock
    (writes replace the file atomically)."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.loads(fh.read())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# -- documents -------------------------------------------------------------------------


class StateFile:
    """One JSON document with locked, atomic read-modify-write."""

    __slots__ = ("lock", "mode", "path")

    def __init__(self, path: Path, *, lock: Path | None = None, mode: int = 0o600) -> None:
        self.path = path
        self.lock = lock
        """What is locked for an update (``None``: ``<name>.lock`` beside it)."""
        self.mode = mode
        """The document's file mode (before the umask)."""

    def read(self) -> dict[str, Any]:
        """The document now (``{}`` when missing or unreadable); takes no lock, since
        writes replace the file atomically."""
        return read_document(os.fspath(self.path))

    def update(self, change: Callable[[dict[str, Any]], T]) -> T:
        """Apply ``change`` to the document under an exclusive lock and save it.

        ``change`` mutates the dict it gets and returns what the caller wants back. The
        document is written only when ``change`` altered it. Raises
        :class:`StateLockError` after :data:`LOCK_TIMEOUT_S` of waiting."""
        lock = None if self.lock is None else os.fspath(self.lock)
        return update_document(os.fspath(self.path), change, lock=lock, mode=self.mode)

    # -- small generic helpers, all locked ---------------------------------------------

    def get(self, key: str, default: Any = None) -> Any:
        """One top-level value (unlocked read)."""
        return self.read().get(key, default)

    def set(self, key: str, value: Any) -> None:
        """Set one top-level value (JSON-serializable)."""

        def change(data: dict[str, Any]) -> None:
            data[key] = value

        self.update(change)

    def claim_once(self, flag: str, *, group: str = ONCE) -> bool:
        """``True`` exactly once per ``flag`` until :meth:`reset` of ``group``: the
        first concurrent caller wins, every other caller gets ``False``. Inside an
        :meth:`update` of the same document (which holds its lock), use :func:`claim`."""
        return self.update(lambda data: claim(data, flag, group=group))

    def claimed(self, flag: str, *, group: str = ONCE) -> bool:
        """Whether ``flag`` was claimed (unlocked read)."""
        flags = self.read().get(group)
        return isinstance(flags, list) and flag in flags

    def append(self, key: str, item: Any, *, max_items: int = MAX_LIST_ITEMS) -> None:
        """Append ``item`` to the list at ``key`` (a queue for another hook to take)."""

        def change(data: dict[str, Any]) -> None:
            items = data.get(key)
            if not isinstance(items, list):
                items = []
            items.append(item)
            data[key] = items[-max_items:]

        self.update(change)

    def take(self, key: str) -> list[Any]:
        """Remove and return the list at ``key`` (``[]`` when none): each item is
        delivered to exactly one caller."""

        def change(data: dict[str, Any]) -> list[Any]:
            items = data.pop(key, None)
            return items if isinstance(items, list) else []

        return self.update(change)

    def reset(self, *keys: str) -> None:
        """Remove ``keys`` (e.g. the ``once`` group when an episode ends)."""

        def change(data: dict[str, Any]) -> None:
            for key in keys:
                data.pop(key, None)

        self.update(change)


def claim(data: dict[str, Any], flag: str, *, group: str = ONCE) -> bool:
    """:meth:`StateFile.claim_once` on a document an :meth:`StateFile.update` has open:
    ``True`` the first time ``flag`` is claimed in ``group``, ``False`` after, until the
    group is removed. One decision that claims among other changes makes them all under
    one lock this way (a second ``update`` of the same document inside the first would
    wait for its own lock)."""
    flags = data.get(group)
    if not isinstance(flags, list):
        flags = []
    if flag in flags:
        return False
    flags.append(flag)
    data[group] = flags
    return True


def update_document(
    path: str,
    change: Callable[[dict[str, Any]], T],
    *,
    lock: str | None = None,
    mode: int = 0o600,
) -> T:
    """:meth:`StateFile.update` of the document at ``path``. ``lock``: a directory to
    lock instead of ``<name>.lock`` (the project's records lock their folder, so no lock
    file lands in the project)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if lock is None:
        fd = os.open(os.path.splitext(path)[0] + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    else:
        fd = os.open(lock, os.O_RDONLY | os.O_DIRECTORY)
    try:
        _lock(fd, path)
        data = read_document(path)
        before = json.dumps(data)
        result = change(data)
        if json.dumps(data) != before:
            _write(path, data, mode)
        return result
    finally:
        os.close(fd)  # closing the descriptor releases the flock


def _write(path: str, data: dict[str, Any], mode: int = 0o600) -> None:
    text = json.dumps(data)
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.{time.time_ns()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            os.write(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _lock(fd: int, path: str) -> None:
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise StateLockError(
                    f"the state document {path} stayed locked for {LOCK_TIMEOUT_S:g} s"
                ) from None
            time.sleep(0.005)


def session_state(host: str, session_id: str) -> StateFile:
    """The document of one session of ``host`` (``session_id`` from the payload)."""
    return StateFile(Path(session_doc_path(host, session_id)))


def project_key(project_dir: str | os.PathLike[str]) -> str:
    """The name the previous layout gave a project's document in the user's state
    directory: a digest of its resolved path."""
    resolved = os.path.realpath(os.fspath(project_dir))
    return hashlib.sha256(resolved.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def project_state(project_dir: str | os.PathLike[str]) -> StateFile:
    """The document of one project's handoff files, shared by every host and every
    person: ``.ctxrelay/handoff/chain.json`` beside the files, locked by their folder,
    readable as the files are. Records the user's state directory kept for it before are
    merged in first, once."""
    folder = Path(os.path.realpath(os.fspath(project_dir))) / HANDOFF_DIR
    doc = StateFile(folder / PROJECT_RECORDS, lock=folder, mode=0o666)
    root = state_root()
    name = f"{project_key(project_dir)}.json"
    for legacy in (
        os.path.join(root, "projects", name),
        os.path.join(root, "claude", "projects", name),
    ):
        if os.path.exists(legacy) and folder.is_dir():
            _merge_legacy(doc, legacy)
    return doc


def _merge_legacy(doc: StateFile, legacy: str) -> None:
    """Fold one person's records of the project from the previous layout into the
    project's document (lists joined, tables with the project's entries winning; the
    handoffs it reserved or saw written are that person's), then remove it."""
    old = read_document(legacy)
    me = owner()

    def change(data: dict[str, Any]) -> None:
        for key, value in old.items():
            here = data.get(key)
            if isinstance(value, list):
                kept = here if isinstance(here, list) else []
                data[key] = [*(x for x in value if x not in kept), *kept]
            elif isinstance(value, dict):
                data[key] = {**value, **(here if isinstance(here, dict) else {})}
        owners = data.get("owners")
        owners = owners if isinstance(owners, dict) else {}
        for key in ("reserved", "reserved_by", "written"):
            for handoff in old.get(key) or ():
                if isinstance(handoff, str):
                    owners.setdefault(handoff, me)
        if owners:
            data["owners"] = owners

    doc.update(change)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(legacy)


def owner() -> str:
    """This state directory's id (random, made once): whose sessions reserved or wrote
    a handoff, as the project's records say, without naming anyone."""
    path = os.path.join(state_root(), "owner")
    try:
        with open(path, encoding="ascii") as fh:
            text = fh.read().strip()
        if text:
            return text
    except OSError:
        pass
    os.makedirs(state_root(), exist_ok=True)
    made = os.urandom(8).hex()
    tmp = f"{path}.{os.getpid()}.{time.time_ns()}.tmp"
    try:
        with open(tmp, "x", encoding="ascii") as fh:
            fh.write(made + "\n")
        os.link(tmp, path)  # made whole or not at all; the first hook's id wins
    except FileExistsError:
        with open(path, encoding="ascii") as fh:
            return fh.read().strip()
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return made


def shared_state(host: str, name: str) -> StateFile:
    """A document of ``host`` shared by all its sessions (e.g. Claude Code's ``windows``)."""
    return StateFile(Path(host_dir(host)) / f"{safe_name(name)}.json")
