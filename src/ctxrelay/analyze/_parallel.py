"""Reading many transcripts on every core: the read is CPU-bound (decoding), and a corpus
is many files, so from :data:`MIN_PARALLEL_BYTES` on the files are split by size between
this process and worker processes (:class:`concurrent.futures.ProcessPoolExecutor`),
each worker sending back :func:`~ctxrelay.transcripts._formats.read_file`'s plain data
(a Claude Code transcript's or a Codex rollout's).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, TypeAlias

from ctxrelay.analyze._discover import discover, files_of
from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts._formats import read_file, transcript_from

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from concurrent.futures import Future, ProcessPoolExecutor

    from ctxrelay.transcripts._formats import RawFile
    from ctxrelay.transcripts._scan import Transcript

Files: TypeAlias = "list[tuple[str, bool]]"
RawResult: TypeAlias = "tuple[list[RawFile], list[TranscriptError]]"
Result: TypeAlias = "tuple[dict[str, Transcript], dict[str, TranscriptError]]"

__all__ = ["MIN_PARALLEL_BYTES", "Reading", "cores", "scan_all", "start_reading"]

MIN_PARALLEL_BYTES = 64_000_000
"""Below this much transcript a second process costs more than it saves (its start and
the hand-back of what it read; ``docs/analyze.md``, "How it reads")."""


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


def _read_files(files: Files) -> RawResult:
    done: list[RawFile] = []
    failed: list[TranscriptError] = []
    for path, agent in files:
        try:
            done.append(read_file(path, agent=agent))
        except TranscriptError as exc:
            failed.append(exc)
    return done, failed


def _into(result: Result, raw: RawResult) -> None:
    done, failed = raw
    for t in done:
        result[0][t.path] = transcript_from(t)
    for exc in failed:
        result[1][exc.path] = exc


class Reading:
    """Transcripts being read: the workers start on their shares at once, and the share
    left to this process is read when :meth:`result` is called.

    ``workers`` caps the processes (default: the cores, when the files are several and
    at least :data:`MIN_PARALLEL_BYTES` in all; ``1`` reads everything here)."""

    def __init__(
        self,
        files: Files,
        *,
        workers: int | None = None,
        sessions: Sequence[str] = (),
        paths: Sequence[str] = (),
    ) -> None:
        self.files = [(os.fspath(path), agent) for path, agent in files]
        self.paths = list(paths)
        self.sessions = list(sessions)
        sizes = {path: _size(path) for path, _ in self.files}
        if workers is None:
            big = len(self.files) > 1 and sum(sizes.values()) >= MIN_PARALLEL_BYTES
            workers = cores() if big else 1
        workers = max(1, min(workers, len(self.files)))
        self._pool: ProcessPoolExecutor | None = None
        self._futures: list[Future[RawResult]] = []
        self._mine = self.files
        if workers > 1:
            from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415 — multiprocessing (~20 ms): a read on one process needs none

            shares = _split(self.files, workers, sizes)
            self._mine = shares.pop(0)
            self._pool = ProcessPoolExecutor(max_workers=len(shares))
            self._futures = [self._pool.submit(_read_files, share) for share in shares]

    def result(self) -> Result:
        """Every file read once: ``(transcripts by path, errors by path)``, in the order
        of the files."""
        result: Result = ({}, {})
        _into(result, _read_files(self._mine))
        for future in self._futures:
            _into(result, future.result())
        self.close()
        order = {path: k for k, (path, _) in enumerate(self.files)}
        return (
            dict(sorted(result[0].items(), key=lambda item: order[item[0]])),
            dict(sorted(result[1].items(), key=lambda item: order[item[0]])),
        )

    def close(self) -> None:
        """Stop the workers (at once, when the caller gave up before :meth:`result`)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def scan_all(files: Files, *, workers: int | None = None) -> Result:
    """Every file read once: ``(transcripts by path, errors by path)``; ``workers`` as
    for :class:`Reading`."""
    return Reading(files, workers=workers).result()


def start_reading(paths: Iterable[str | os.PathLike[str]]) -> Reading:
    """The sessions under ``paths`` (:func:`~ctxrelay.analyze._discover.discover`), their
    files already being read by the workers when they are worth some;
    :func:`~ctxrelay.analyze.analyze_paths` takes the result."""
    named = [os.fspath(p) for p in paths]
    sessions = discover(named)
    return Reading(files_of(sessions), sessions=sessions, paths=named)
