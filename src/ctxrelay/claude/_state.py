"""Durable state of the Claude Code hooks: small JSON documents, safe under concurrent hooks.

Claude Code runs one ``ctxrelay-hook`` process per event, often several at once (parallel
tool calls, a subagent's hooks next to the main thread's, the statusline every few
seconds). What one hook learns and the next must know lives here: the once-per-episode
hint flags, the progress of an auto handoff, the window size the statusline saw, the
notices a subagent leaves for the main thread, the cached usable limit, the subagent
transcript cursors.

**Where.** The user's state directory, not the project: ``$CTXRELAY_STATE_DIR`` if set,
else ``$XDG_STATE_HOME/ctxrelay/claude``, else ``~/.local/state/ctxrelay/claude``.
Documents are keyed by Claude Code's ``session_id`` (a UUID, unique across projects), so
the project tree stays clean (nothing to ignore in git), and a ``cd`` mid-session (the
payload's ``cwd`` follows it) cannot split one session's state in two. What the user
reads and keeps, the handoff files, lives in the project (``.ctxrelay/handoff/``).

**How.** One file ``<name>.json`` per document and a lock file ``<name>.lock`` beside
it. :meth:`StateFile.update` takes an exclusive ``fcntl.flock`` on the lock file, reads,
applies a function, and replaces the document atomically (write a temp file, fsync,
``os.replace``), so a reader never sees half a document and two hooks never lose each
other's update. A missing or unreadable document reads as ``{}``: hooks fail open, and the
next update rewrites it whole.

Every hook reads its session's document by path, with ``os``; ``pathlib`` and ``hashlib``
(OpenSSL) are imported by the few functions that use them, as no per-tool-call path does.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ctxrelay.errors import CtxrelayError

if TYPE_CHECKING:
    from pathlib import Path

T = TypeVar("T")

__all__ = [
    "LOCK_TIMEOUT_S",
    "MAX_LIST_ITEMS",
    "StateFile",
    "StateLockError",
    "cursor_path",
    "is_plain",
    "notice_possible",
    "pending_marker",
    "project_state",
    "read_document",
    "record_window",
    "recorded_window",
    "safe_name",
    "session_doc_path",
    "session_state",
    "shared_state",
    "state_dir",
    "state_root",
    "update_document",
]

LOCK_TIMEOUT_S = 5.0
"""Longest wait for another hook's lock; then the hook fails open rather than hang."""

MAX_LIST_ITEMS = 100
"""Cap of a list kept by :meth:`StateFile.append`, so a stuck consumer cannot grow a
document without bound (oldest items are dropped first)."""

_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
_MAX_NAME = 96


class StateLockError(CtxrelayError):
    """Another process held a state document's lock for too long."""


# -- where things are -----------------------------------------------------------------


def state_dir() -> str:
    """``$CTXRELAY_STATE_DIR``, else ``$XDG_STATE_HOME/ctxrelay/claude`` (absolute values
    only), else ``~/.local/state/ctxrelay/claude``."""
    explicit = os.environ.get("CTXRELAY_STATE_DIR")
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_STATE_HOME")
    base = (
        xdg
        if xdg and os.path.isabs(xdg)
        else os.path.join(os.path.expanduser("~"), ".local", "state")
    )
    return os.path.join(base, "ctxrelay", "claude")


def state_root() -> Path:
    """:func:`state_dir` as a :class:`~pathlib.Path`."""
    from pathlib import Path

    return Path(state_dir())


def safe_name(name: str) -> str:
    """A file-name-safe form of ``name``; ids from payloads are never trusted as paths.

    Plain ids (UUIDs, agent ids) stay readable; anything else becomes a hash."""
    if 0 < len(name) <= _MAX_NAME and all(c in _SAFE for c in name) and not name.startswith("."):
        return name
    import hashlib

    return "h-" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def is_plain(name: object) -> bool:
    """A payload id that can be a file name as it is (UUIDs, agent ids)."""
    return isinstance(name, str) and 0 < len(name) <= 128 and all(c in _PLAIN for c in name)


def session_doc_path(session_id: str, root: str | None = None) -> str:
    """The JSON document of one Claude Code session."""
    base = state_dir() if root is None else root
    return os.path.join(base, "sessions", safe_name(session_id) + ".json")


def cursor_path(session_id: str, agent_id: str) -> str:
    """The transcript cursor of one subagent (see :func:`ctxrelay.transcripts.read_agent`);
    both ids are plain names (checked by :func:`ctxrelay.transcripts.subagent_transcript`
    or :func:`is_plain`)."""
    return os.path.join(state_dir(), "agents", session_id, f"{agent_id}.json")


def pending_marker(session_id: str) -> str:
    """Exists while notices may be queued for the session's main thread, so the main
    thread's hooks can skip loading the notices machinery on every tool call."""
    return os.path.join(state_dir(), "agents", session_id, "notices.pending")


def notice_possible(payload: Mapping[str, Any]) -> bool:
    """Whether a main-thread hook may have a stopped-short notice to deliver: the payload
    reports an ended subagent, or one was queued. False lets the hook answer without
    loading :mod:`ctxrelay.claude._notices` (the common case: an ordinary tool call)."""
    if payload.get("tool_name") in ("Agent", "Task"):
        return True
    prompt = payload.get("prompt")
    if isinstance(prompt, str) and "<task-notification>" in prompt:
        return True
    session_id = payload.get("session_id")
    return is_plain(session_id) and os.path.exists(pending_marker(str(session_id)))


def read_document(path: str) -> dict[str, Any]:
    """A state document as it is now (``{}`` when missing or unreadable), without a lock
    (writes replace the file atomically) and without ``pathlib``."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.loads(fh.read())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# -- documents -------------------------------------------------------------------------


class StateFile:
    """One JSON document with locked, atomic read-modify-write."""

    __slots__ = ("path",)

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> dict[str, Any]:
        """The document now (``{}`` when missing or unreadable); takes no lock, since
        writes replace the file atomically."""
        return read_document(os.fspath(self.path))

    def update(self, change: Callable[[dict[str, Any]], T]) -> T:
        """Apply ``change`` to the document under an exclusive lock and save it.

        ``change`` mutates the dict it gets and returns what the caller wants back. The
        document is written only when ``change`` altered it. Raises
        :class:`StateLockError` after :data:`LOCK_TIMEOUT_S` of waiting."""
        return update_document(os.fspath(self.path), change)

    # -- small generic helpers, all locked ---------------------------------------------

    def get(self, key: str, default: Any = None) -> Any:
        """One top-level value (unlocked read)."""
        return self.read().get(key, default)

    def set(self, key: str, value: Any) -> None:
        """Set one top-level value (JSON-serializable)."""

        def change(data: dict[str, Any]) -> None:
            data[key] = value

        self.update(change)

    def claim_once(self, flag: str, *, group: str = "once") -> bool:
        """``True`` exactly once per ``flag`` until :meth:`reset` of ``group``: the
        first concurrent caller wins, every other caller gets ``False``."""

        def change(data: dict[str, Any]) -> bool:
            flags = data.get(group)
            if not isinstance(flags, list):
                flags = []
            if flag in flags:
                return False
            flags.append(flag)
            data[group] = flags
            return True

        return self.update(change)

    def claimed(self, flag: str, *, group: str = "once") -> bool:
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


def update_document(path: str, change: Callable[[dict[str, Any]], T]) -> T:
    """:meth:`StateFile.update` of the document at ``path``, without ``pathlib``."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(os.path.splitext(path)[0] + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        _lock(fd, path)
        data = read_document(path)
        before = json.dumps(data)
        result = change(data)
        if json.dumps(data) != before:
            _write(path, data)
        return result
    finally:
        os.close(fd)  # closing the descriptor releases the flock


def _write(path: str, data: dict[str, Any]) -> None:
    text = json.dumps(data)
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.{time.time_ns()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
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


def session_state(session_id: str, root: Path | None = None) -> StateFile:
    """The document of one Claude Code session (``session_id`` from the payload)."""
    from pathlib import Path

    return StateFile(Path(session_doc_path(session_id, None if root is None else str(root))))


def project_state(project_dir: str | os.PathLike[str], root: Path | None = None) -> StateFile:
    """The document of one project (e.g. which handoff files a fresh session consumed),
    keyed by the project directory's resolved path."""
    base = state_root() if root is None else root
    resolved = os.path.realpath(os.fspath(project_dir))
    import hashlib

    key = hashlib.sha256(resolved.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return StateFile(base / "projects" / f"{key}.json")


def shared_state(name: str, root: Path | None = None) -> StateFile:
    """A document shared by all sessions (e.g. ``windows``: model id -> window size)."""
    base = state_root() if root is None else root
    return StateFile(base / f"{safe_name(name)}.json")


# -- the window size the statusline saw ------------------------------------------------


def record_window(
    session_id: str | None, model: str | None, window: int, root: Path | None = None
) -> None:
    """Remember the window size Claude Code reported to the statusline, for the session
    and for its model id (a fresh session may stop before its first statusline run).

    Writes only when the value changed: the statusline runs every few seconds."""
    if window <= 0:
        return
    if session_id:
        doc = session_state(session_id, root)
        if doc.get("window") != window:
            doc.set("window", window)
    if model:
        windows = shared_state("windows", root)
        current = windows.get("models", {})
        if not isinstance(current, dict) or current.get(model) != window:

            def change(data: dict[str, Any]) -> None:
                models = data.get("models")
                if not isinstance(models, dict):
                    models = {}
                models[model] = window
                data["models"] = models

            windows.update(change)


def recorded_window(
    session_id: str | None, model: str | None, root: Path | None = None
) -> int | None:
    """The window size the statusline recorded for this session, else for this model."""
    if session_id:
        value = session_state(session_id, root).get("window")
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    if model:
        models = shared_state("windows", root).get("models", {})
        value = models.get(model) if isinstance(models, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None
