"""Reading many transcripts on every core: the full pass is CPU-bound (decoding), and a
corpus is many files, so the files are split by size between this process and forked
children, each child sending its :class:`~ctxrelay.transcripts.Transcript` values back through a
pipe as plain tuples in :mod:`marshal` form (built in and loaded already: ``pickle``
would cost more to import than a small corpus takes to read).

Forking is used only where it is safe and cheap: a platform with ``os.fork``, no other
thread running in this process, several files and enough bytes to be worth a process.
Anything a child cannot deliver is read again here, so the result never depends on it.
"""

from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path
from typing import Any

from ctxrelay.errors import TranscriptError
from ctxrelay.transcripts import Compaction, Response, Transcript, Usage, scan

__all__ = ["MIN_PARALLEL_BYTES", "cores", "scan_all"]

MIN_PARALLEL_BYTES = 64_000_000
"""Below this much transcript a second process costs more than it saves. Measured whole
process on a loaded 2-core machine: on 9.8 MB one reader was 10 ms faster than two
(the parent rebuilding the child's values costs about what the child saved), on 76 MB
they were even."""

Files = list[tuple[Path, bool]]
Result = tuple[dict[Path, Transcript], dict[Path, TranscriptError]]


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _scan_files(files: Files) -> Result:
    done: dict[Path, Transcript] = {}
    failed: dict[Path, TranscriptError] = {}
    for path, agent in files:
        try:
            done[path] = scan(path, agent=agent)
        except TranscriptError as exc:
            failed[path] = exc
    return done, failed


def _can_fork() -> bool:
    if not hasattr(os, "fork"):  # pragma: no cover - Windows
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


def _split(files: Files, parts: int) -> list[Files]:
    """``parts`` lists of about equal bytes (largest file first, into the lightest)."""
    sized = sorted(files, key=lambda f: -_size(f[0]))
    bins: list[Files] = [[] for _ in range(parts)]
    loads = [0] * parts
    for item in sized:
        k = loads.index(min(loads))
        bins[k].append(item)
        loads[k] += _size(item[0])
    return [b for b in bins if b]


def _pack_response(r: Response) -> tuple[Any, ...]:
    u = r.usage
    return (
        r.message_id,
        r.model,
        (
            u.input_tokens,
            u.cache_creation_input_tokens,
            u.cache_read_input_tokens,
            u.output_tokens,
            u.cache_creation_1h_tokens,
        ),
        r.sidechain,
        r.segment,
        r.timestamp,
        r.agent_id,
    )


def _unpack_response(raw: tuple[Any, ...]) -> Response:
    message_id, model, usage, sidechain, segment, timestamp, agent_id = raw
    return Response(message_id, model, Usage(*usage), sidechain, segment, timestamp, agent_id)


def _pack(result: Result) -> bytes:
    done, failed = result
    transcripts = [
        (
            os.fspath(path),
            t.path,
            t.session_id,
            t.version,
            [_pack_response(r) for r in t.responses],
            [_pack_response(r) for r in t.sidechain_responses],
            [
                (c.pre_tokens, c.trigger, c.after_requests, c.summary_chars, c.timestamp)
                for c in t.compactions
            ],
            t.lines,
            t.malformed_lines,
            t.size_bytes,
            list(t.models),
            t.synthetic_responses,
            t.request_ids,
        )
        for path, t in done.items()
    ]
    errors = [(os.fspath(path), str(exc)) for path, exc in failed.items()]
    return marshal.dumps((transcripts, errors))


def _unpack(data: bytes) -> Result:
    transcripts, errors = marshal.loads(data)
    done: dict[Path, Transcript] = {}
    for (
        key,
        path,
        sid,
        version,
        main,
        side,
        comps,
        lines,
        bad,
        size,
        models,
        syn,
        ids,
    ) in transcripts:
        done[Path(key)] = Transcript(
            path=path,
            session_id=sid,
            version=version,
            responses=tuple(_unpack_response(r) for r in main),
            sidechain_responses=tuple(_unpack_response(r) for r in side),
            compactions=tuple(Compaction(*c) for c in comps),
            lines=lines,
            malformed_lines=bad,
            size_bytes=size,
            models=tuple(models),
            synthetic_responses=syn,
            request_ids=ids,
        )
    return done, {Path(p): TranscriptError(message) for p, message in errors}


def _child(files: Files, fd: int) -> None:  # pragma: no cover - runs in the forked child
    code = 0
    try:
        data = _pack(_scan_files(files))
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
        return _unpack(b"".join(chunks))
    except (ValueError, TypeError, EOFError):
        return None


def scan_all(files: Files, *, workers: int | None = None) -> Result:
    """Every file read once: ``(transcripts by path, errors by path)``.

    ``workers`` caps the processes (default: the cores, when the files are several and
    at least :data:`MIN_PARALLEL_BYTES` in all; ``1`` reads everything here)."""
    if workers is None:
        enough = len(files) > 1 and sum(_size(p) for p, _ in files) >= MIN_PARALLEL_BYTES
        workers = cores() if enough else 1
    workers = max(1, min(workers, len(files)))
    if workers == 1 or not _can_fork():
        return _scan_files(files)
    mine, *theirs = _split(files, workers)
    children: list[tuple[int, int, Files]] = []
    for part in theirs:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(read_fd)
            _child(part, write_fd)
        os.close(write_fd)
        children.append((pid, read_fd, part))
    done, failed = _scan_files(mine)
    for pid, fd, part in children:
        got = _collect(pid, fd)
        if got is None:
            got = _scan_files(part)  # the child failed: read its share here
        done.update(got[0])
        failed.update(got[1])
    return done, failed
