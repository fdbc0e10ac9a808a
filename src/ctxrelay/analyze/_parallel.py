"""Reading many transcripts on every core: the full pass is CPU-bound (decoding), and a
corpus is many files, so the files are split by size between this process and forked
children, each child sending its :class:`~ctxrelay.transcripts.Transcript` values back through a
pipe as the plain tuples :func:`~ctxrelay.transcripts._pass.read_raw` returns, in
:mod:`marshal` form (built in and loaded already: ``pickle``
would cost more to import than a small corpus takes to read).

Forking is used only where it is safe and cheap: a platform with ``os.fork``, no other
thread running in this process, several files and enough bytes to be worth a process.
Anything a child cannot deliver is read again here, so the result never depends on it.
"""

from __future__ import annotations

import marshal
import os
import sys

from ctxrelay.analyze._discover import discover, files_of
from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts._pass import decoder_for, has_c_pass, read_raw

TYPE_CHECKING = False  # annotations only; mypy reads any constant named TYPE_CHECKING as true
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

    from ctxrelay.transcripts._pass import RawTranscript
    from ctxrelay.transcripts._scan import Transcript

    RawResult = tuple[list[tuple[str, RawTranscript]], list[tuple[str, str]]]
    Files = list[tuple[str, bool]]
    Result = tuple[dict[str, Transcript], dict[str, TranscriptError]]

__all__ = [
    "MIN_PARALLEL_BYTES",
    "PREFETCH_MIN_BYTES",
    "Reading",
    "cores",
    "scan_all",
    "start_reading",
]

MIN_PARALLEL_BYTES = 64_000_000
"""Below this much transcript a second process costs more than it saves. Measured whole
process on a loaded 2-core machine: on 9.8 MB one reader was 10 ms faster than two
(the parent rebuilding the child's values costs about what the child saved), on 76 MB
they were even."""


PREFETCH_MIN_BYTES = 1_000_000
"""From this much transcript on, ``analyze --json`` has a child read it while it imports
the rest of the analyzer, when the read is the Python pass: the import takes about as
long as that pass over 10 MB, a fork about as long as over 1 MB (reference machine,
``bench/analyze.py``). The C pass reads 10 MB in about 5 ms, less than a child's fork
and the decoding of what it sends back, so with it only a read of
:data:`MIN_PARALLEL_BYTES` or more starts early (on every core)."""


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _sizes(files: Files) -> dict[str, int]:
    """Each file's size, looked up once (a file gone since the listing counts 0)."""
    return {path: _size(path) for path, _ in files}


def _scan_files(files: Files, loads: Callable[[bytes], Any]) -> Result:
    return _result(_read_files(files, loads))


def _can_fork() -> bool:
    if not hasattr(os, "fork"):  # pragma: no cover - Windows
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


def _split(files: Files, parts: int, sizes: dict[str, int]) -> list[Files]:
    """``parts`` lists of about equal bytes (largest file first, into the lightest)."""
    sized = sorted(files, key=lambda f: -sizes[f[0]])
    bins: list[Files] = [[] for _ in range(parts)]
    loads = [0] * parts
    for item in sized:
        k = loads.index(min(loads))
        bins[k].append(item)
        loads[k] += sizes[item[0]]
    return [b for b in bins if b]


def _read_files(files: Files, loads: Callable[[bytes], Any]) -> RawResult:
    done: list[tuple[str, RawTranscript]] = []
    failed: list[tuple[str, str]] = []
    for path, agent in files:
        key = os.fspath(path)
        try:
            done.append((key, read_raw(key, agent=agent, loads=loads)))
        except TranscriptError as exc:
            failed.append((key, str(exc)))
    return done, failed


def _result(raw: RawResult) -> Result:
    from ctxrelay.transcripts._scan import transcript_of  # the values, after the read

    done, failed = raw
    return (
        {key: transcript_of(t) for key, t in done},
        {key: TranscriptError(message) for key, message in failed},
    )


def _child(
    files: Files, fd: int, loads: Callable[[bytes], Any]
) -> None:  # pragma: no cover - runs in the forked child
    code = 0
    try:
        data = marshal.dumps(_read_files(files, loads))
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _collect(pid: int, fd: int) -> Result | None:
    chunks = []
    with os.fdopen(fd, "rb") as f:
        while chunk := f.read(1 << 20):
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if status != 0 or not chunks:
        return None
    try:
        return _result(marshal.loads(b"".join(chunks)))
    except (ValueError, TypeError, EOFError):
        return None


class Reading:
    """Transcripts being read: forked children start at once on their share, and the
    share left to this process is read when :meth:`result` is called.

    ``workers`` caps the processes (default: the cores, when the files are several and
    at least :data:`MIN_PARALLEL_BYTES` in all; ``1`` reads everything here). With
    ``away=True`` this process keeps no share while a child can take it all: it has
    other work meanwhile (``analyze --json`` imports the rest of the analyzer)."""

    __slots__ = ("_children", "_loads", "_mine", "files", "paths", "sessions")

    def __init__(
        self,
        files: Files,
        *,
        workers: int | None = None,
        away: bool = False,
        sessions: Sequence[str] = (),
        paths: Sequence[str] = (),
        sizes: dict[str, int] | None = None,
    ) -> None:
        self.files = files
        self.paths = list(paths)
        self.sessions = list(sessions)
        if sizes is None:
            sizes = _sizes(files)
        total = sum(sizes.values())
        self._loads = decoder_for(total)
        if workers is None:
            workers = cores() if len(files) > 1 and total >= MIN_PARALLEL_BYTES else 1
        workers = max(1, min(workers, len(files)))
        self._children: list[tuple[int, int, Files]] = []
        if not files or not _can_fork() or (workers == 1 and not away):
            self._mine = files
            return
        shares = _split(files, workers, sizes)
        self._mine = [] if away and workers == 1 else shares.pop(0)
        for part in shares:
            read_fd, write_fd = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                os.close(read_fd)
                _child(part, write_fd, self._loads)
            os.close(write_fd)
            self._children.append((pid, read_fd, part))

    def result(self) -> Result:
        """Every file read once: ``(transcripts by path, errors by path)``. Anything a
        child could not deliver is read here."""
        done, failed = _scan_files(self._mine, self._loads)
        children, self._children = self._children, []
        for pid, fd, part in children:
            got = _collect(pid, fd)
            if got is None:
                got = _scan_files(part, self._loads)  # the child failed: read its share here
            done.update(got[0])
            failed.update(got[1])
        return done, failed

    def close(self) -> None:
        """Stop the children whose share was never collected (the caller gave up)."""
        children, self._children = self._children, []
        for pid, fd, _ in children:
            import contextlib
            import signal

            os.close(fd)
            with contextlib.suppress(ProcessLookupError):  # it had exited
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def scan_all(files: Files, *, workers: int | None = None) -> Result:
    """Every file read once: ``(transcripts by path, errors by path)``; ``workers`` as
    for :class:`Reading`."""
    return Reading(files, workers=workers).result()


def start_reading(paths: Iterable[str | os.PathLike[str]]) -> Reading:
    """The sessions under ``paths`` (:func:`~ctxrelay.analyze._discover.discover`), their
    files already being read by a forked child when they are worth one (at least
    :data:`PREFETCH_MIN_BYTES`, and a second core), so the caller can import the rest of
    the analyzer meanwhile; :func:`~ctxrelay.analyze.analyze_paths` takes the result."""
    named = [os.fspath(p) for p in paths]
    sessions = discover(named)
    files = files_of(sessions)
    sizes = _sizes(files)
    total = sum(sizes.values())
    early = PREFETCH_MIN_BYTES if not has_c_pass() else MIN_PARALLEL_BYTES
    if total < early or cores() < 2:
        return Reading(files, workers=1, sessions=sessions, paths=named, sizes=sizes)
    if total >= MIN_PARALLEL_BYTES:
        return Reading(files, sessions=sessions, paths=named, sizes=sizes)
    return Reading(files, workers=1, away=True, sessions=sessions, paths=named, sizes=sizes)
