"""Reading and analysing many sessions on every core: a session's read is CPU-bound
(decoding) and so is its analysis (pricing, replays), and a corpus is many sessions, so
from :data:`MIN_PARALLEL_BYTES` on each session (its file with its agent files) is read
and analysed whole in one process: the workers of a
:class:`concurrent.futures.ProcessPoolExecutor` take the largest first, each the next
one when it is free, this process the smallest, until they meet; it takes the workers'
results as they come (``docs/analyze.md``, "How it reads").
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar

from ctxrelay.analyze._discover import discover, session_files
from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts._formats import read_file, transcript_from
from ctxrelay.transcripts._opencode_paths import is_database

if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterable, Sequence
    from concurrent.futures import Future, ProcessPoolExecutor

    from ctxrelay.transcripts._scan import Transcript

Files: TypeAlias = "list[tuple[str, bool]]"
Result: TypeAlias = "tuple[dict[str, Transcript], dict[str, TranscriptError]]"
R = TypeVar("R")

__all__ = [
    "MIN_PARALLEL_BYTES",
    "SWITCH_SECONDS",
    "ReadAlready",
    "Reader",
    "Reading",
    "cores",
    "read_session",
    "read_transcript",
    "start_reading",
]

MIN_PARALLEL_BYTES = 64_000_000
"""Below this much transcript a worker process costs more than it saves (its start and
the hand-back of what it found; ``docs/analyze.md``, "How it reads")."""


SWITCH_SECONDS = 0.0005
"""The interpreter's switch interval while workers send reports (the default is 5 ms): at
1 GB a worker waited 0.34-0.86 s in all between its sessions with it, 0.48-1.34 s with
the default, and the run ended 3-30% sooner (three pairs of runs on the shared machine)."""


class Reader(Protocol):
    """How a file of a session is read: its transcript, or a
    :class:`~ctxrelay.errors.TranscriptError` raised."""

    def __call__(self, path: str, agent: bool) -> Transcript: ...


def read_transcript(path: str, agent: bool) -> Transcript:
    """A file read from disk (:func:`~ctxrelay.transcripts._formats.read_file`)."""
    return transcript_from(read_file(path, agent=agent))


def read_session(files: Files, read: Reader = read_transcript) -> Result:
    """Every file of ``files`` read once: ``(transcripts by path, errors by path)``, in
    the order of the files."""
    done: dict[str, Transcript] = {}
    failed: dict[str, TranscriptError] = {}
    for path, agent in files:
        try:
            done[path] = read(path, agent)
        except TranscriptError as exc:
            failed[path] = exc
    return done, failed


class ReadAlready:
    """A :class:`Reader` of files read already (:func:`read_session`): the analysis after
    the read, timed alone (``bench/analyze_phase.py``)."""

    __slots__ = ("result",)

    def __init__(self, result: Result) -> None:
        self.result = result

    def __call__(self, path: str, agent: bool) -> Transcript:
        done, failed = self.result
        if path in failed:
            raise failed[path]
        return done[path]


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


class Reading:
    """The sessions under some paths, each to be read and analysed whole (:meth:`each`).

    ``workers`` caps the processes (default: the cores, when the sessions are several
    and their files at least :data:`MIN_PARALLEL_BYTES` in all; ``1`` does everything
    in this process, in the order of the sessions). ``read`` reads a file (a read
    already done, in a benchmark); with workers it must pickle (a module's function).
    An OpenCode database is read apart (:func:`~ctxrelay.transcripts.read_opencode`)."""

    def __init__(
        self,
        sessions: Sequence[str],
        *,
        workers: int | None = None,
        read: Reader = read_transcript,
    ) -> None:
        self.sessions = list(sessions)
        self.read = read
        self.files = {s: session_files(s) for s in self.sessions if not is_database(s)}
        self._sizes = {s: sum(_size(f) for f, _ in files) for s, files in self.files.items()}
        if workers is None:
            big = len(self.files) > 1 and sum(self._sizes.values()) >= MIN_PARALLEL_BYTES
            workers = cores() if big else 1
        workers = max(1, min(workers, len(self.files)))
        self._workers = workers - 1  # this process is one of them
        self._pool: ProcessPoolExecutor | None = None

    def each(self, work: Callable[[str, Files, Reader], R]) -> Generator[R, None, None]:
        """``work(session, its files, read)`` for every session but the databases, the
        results in the order they come; ``work`` must pickle when there are workers (a
        module's function, or a ``partial`` of one).

        In one process, in the order of the sessions. With workers, the sessions by
        size: the workers take the largest first, this process the smallest, until
        they meet; a worker has the next session waiting whenever it finishes one, and
        this process hands out more between its own (small, so it is soon back). What
        this process does itself never crosses a process boundary."""
        if not self._workers:
            for session, files in self.files.items():
                yield work(session, files, self.read)
            return
        from concurrent.futures import (  # noqa: PLC0415 — multiprocessing (~20 ms): a run in one process needs none
            FIRST_COMPLETED,
            ProcessPoolExecutor,
            wait,
        )

        # The work and the reader are handed to each worker once, not with every session.
        pool = self._pool = ProcessPoolExecutor(
            self._workers, initializer=_hold, initargs=(work, self.read)
        )

        order = sorted(self.files, key=lambda s: -self._sizes[s])
        first, last = 0, len(order)  # order[first:last] is left to do
        running: set[Future[Any]] = set()  # each an R: _held returns what work does
        # The executor's thread here reads each report a worker sends while this thread
        # analyses; a report larger than the pipe's buffer holds its worker until it is
        # read, and the thread waits for the interpreter lock up to a switch interval
        # each time (``docs/analyze.md``, "How it reads").
        interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_SECONDS)
        try:
            while True:
                for future in [f for f in running if f.done()]:
                    running.discard(future)
                    yield future.result()
                # one running and one waiting per worker: none waits for this process
                while first < last and len(running) < 2 * self._workers:
                    session = order[first]
                    running.add(pool.submit(_held, session, self.files[session]))
                    first += 1
                if first < last:
                    last -= 1
                    yield work(order[last], self.files[order[last]], self.read)
                elif running:
                    done, running = wait(running, return_when=FIRST_COMPLETED)
                    for future in done:
                        yield future.result()
                else:
                    return
        finally:
            sys.setswitchinterval(interval)
            self.close()

    def close(self) -> None:
        """Stop the workers (at once, when the caller gave up before the end)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


_work: Callable[[str, Files, Reader], object] | None = None
_read: Reader = read_transcript


def _hold(work: Callable[[str, Files, Reader], object], read: Reader) -> None:
    """A worker's start: the work it does for every session, and how it reads a file."""
    global _work, _read  # one worker process's own, set once at its start
    _work, _read = work, read


def _held(session: str, files: Files) -> object:
    """One session's work in a worker (:func:`_hold`)."""
    assert _work is not None, "the worker was started without its work"
    return _work(session, files, _read)


def start_reading(
    paths: Iterable[str | os.PathLike[str]], *, workers: int | None = None
) -> Reading:
    """The sessions under ``paths`` (:func:`~ctxrelay.analyze._discover.discover`), with
    their files and how many processes they are worth;
    :func:`~ctxrelay.analyze.analyze_paths` reads and analyses them."""
    return Reading(discover(paths), workers=workers)
