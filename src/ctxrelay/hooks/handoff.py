"""A project's handoff files and their records, shared by every host.

A handoff file is ``.ctxrelay/handoff/handoff-<UTC time>.md`` in the project, written by
the agent with its own file tool, in a fixed layout (:data:`LAYOUT`). Names are handed
out by :func:`new_handoff_path`, which reserves each one under the project's state lock:
two hooks (or a hook and a skill) in the same second get different names, and a name is
never handed out twice, so no handoff overwrites another.

A fresh session resumes from the newest *unconsumed* file (:func:`latest_unconsumed`): one
no session has started from, and, at a plain start, one its own person's sessions reserved
or wrote (``owner``: :func:`ctxrelay.hooks.state.owner`); another person's handoff is taken
only on purpose (``ctxrelay handoff continue``). The records live beside the files
(:func:`ctxrelay.hooks.state.project_state`), so a used handoff is used everywhere the
project goes. The host's start hook injects it and records where
(:func:`record_injected`); it is consumed (:func:`mark_consumed`) only once that session's
first exchange went out with it, as its transcript shows, so a crash between the start
and the first request leaves it for the next start (:func:`settle`, which asks the host
that started each session). :func:`drop` sets one aside for good.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from ctxrelay.budget.bounds import HANDOFF_INJECT_MAX_BYTES, HANDOFF_RESUME_MAX_AGE_S
from ctxrelay.budget.triggers import main_budget, main_triggers
from ctxrelay.hooks import chain as _chain
from ctxrelay.hooks import state as _state
from ctxrelay.transcripts import StartedRule
from ctxrelay.transcripts import started as _started

__all__ = [
    "HANDOFF_DIR",
    "INJECT_MAX_BYTES",
    "LAYOUT",
    "MANUAL_NOTE",
    "MAX_RESUME_AGE_S",
    "RESUME_ENV",
    "SECTIONS",
    "Handoff",
    "HandoffInfo",
    "Injection",
    "SliderReading",
    "StartedCheck",
    "consumed",
    "continue_text",
    "continued",
    "describe",
    "display",
    "drop",
    "dropped",
    "handoff_dir",
    "injected_into",
    "injections",
    "is_handoff_path",
    "is_written",
    "latest_unconsumed",
    "list_handoffs",
    "manual_notice",
    "mark_consumed",
    "new_handoff_path",
    "read_handoff",
    "reading",
    "record_injected",
    "record_reserved",
    "reserve",
    "reserved_by",
    "resume_prompt",
    "resume_text",
    "settle",
    "settle_injected",
    "writer_of",
]

HANDOFF_DIR = _state.HANDOFF_DIR
"""Where handoff files go, relative to the project directory."""

SECTIONS: tuple[str, ...] = (
    "Goal",
    "State",
    "Decisions",
    "Files touched",
    "Commands that matter",
    "Next step",
)
"""The fixed layout's sections, in order."""

LAYOUT = "\n".join(
    ["# Handoff", ""]
    + [
        f"## {title}\n{hint}\n"
        for title, hint in zip(
            SECTIONS,
            (
                "What the user asked for, in one or two sentences, and what done means.",
                "What is finished, what is half-done (where exactly), what is not started.",
                "Choices made and why; what was tried and rejected.",
                "Paths changed or created, each with one line on what changed.",
                "Exact commands to build, test or reproduce, with their last result.",
                "The single next action the fresh session takes first.",
            ),
            strict=True,
        )
    ]
)
"""The template the agent fills in (each host's write prompt shows it)."""

INJECT_MAX_BYTES = HANDOFF_INJECT_MAX_BYTES
"""Most of a handoff file injected at ``/clear`` (owned by ``ctxrelay.budget.bounds``)."""

MAX_RESUME_AGE_S = HANDOFF_RESUME_MAX_AGE_S
"""The oldest handoff injected at ``/clear`` (owned by ``ctxrelay.budget.bounds``)."""

# Compiled on first use (``re`` caches it): the Stop hook imports this module every turn.
_NAME = r"^handoff-(\d{8}T\d{6}Z)(?:-(\d+))?\.md$"
_RESERVED_KEEP = 200


def handoff_dir(project_dir: str | os.PathLike[str]) -> Path:
    """The project's handoff directory (not created)."""
    return Path(project_dir) / HANDOFF_DIR


def _stamp(now: float) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))


def new_handoff_path(
    project_dir: str | os.PathLike[str],
    *,
    now: float | None = None,
) -> Path:
    """A fresh, reserved handoff path: ``handoff-<UTC time>.md``, or ``…-2.md``, ``…-3.md``
    when that second's name is taken by a file or an earlier reservation.

    Creates the directory, not the file (Claude Code's Write tool refuses to overwrite a
    file it has not read, so a placeholder would get in the way)."""
    folder = handoff_dir(project_dir)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = _stamp(time.time() if now is None else now)
    doc = _state.project_state(project_dir)

    def reserve(data: dict[str, Any]) -> str:
        reserved = data.get("reserved")
        if not isinstance(reserved, list):
            reserved = []
        taken = set(reserved)
        n = 1
        while True:
            name = f"handoff-{stamp}.md" if n == 1 else f"handoff-{stamp}-{n}.md"
            if name not in taken and not (folder / name).exists():
                break
            n += 1
        reserved.append(name)
        data["reserved"] = reserved[-_RESERVED_KEEP:]
        _chain.own(data, name)
        return name

    return folder / doc.update(reserve)


def _sort_key(path: Path) -> tuple[str, int]:
    match = re.match(_NAME, path.name)
    if match is None:
        return ("", 0)
    return (match.group(1), int(match.group(2) or 1))


def list_handoffs(project_dir: str | os.PathLike[str]) -> list[Path]:
    """The project's handoff files, oldest first (by the time in their names)."""
    folder = handoff_dir(project_dir)
    try:
        entries = list(folder.iterdir())
    except OSError:
        return []
    files = [p for p in entries if re.match(_NAME, p.name) and p.is_file() and not p.is_symlink()]
    return sorted(files, key=_sort_key)


def is_handoff_path(project_dir: str | os.PathLike[str], path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` (e.g. from a Write tool call) names a handoff file of the project;
    relative paths are taken from the project, and ``..`` or symlinks cannot escape."""
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = Path(project_dir) / candidate
    folder = os.path.realpath(handoff_dir(project_dir))
    real = os.path.realpath(candidate)
    return os.path.dirname(real) == folder and re.match(_NAME, os.path.basename(real)) is not None


class Handoff(NamedTuple):
    """A handoff file as read back."""

    path: Path
    text: str
    truncated: bool
    next_step: str | None


def _section(text: str, title: str) -> str | None:
    lines = text.splitlines()
    out: list[str] = []
    inside = False
    for line in lines:
        if line.startswith("#"):
            heading = line.lstrip("#").strip().rstrip(":").lower()
            if inside:
                break
            inside = heading == title.lower()
            continue
        if inside:
            out.append(line)
    body = "\n".join(out).strip()
    return body or None


def read_handoff(path: Path, *, max_bytes: int = INJECT_MAX_BYTES) -> Handoff | None:
    """Read a handoff file (at most ``max_bytes``); ``None`` when missing or empty."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError:
        return None
    truncated = len(raw) > max_bytes
    text = raw[:max_bytes].decode("utf-8", "replace")
    if not text.strip():
        return None
    return Handoff(path, text, truncated, _section(text, "Next step"))


def latest_unconsumed(
    project_dir: str | os.PathLike[str],
    *,
    now: float | None = None,
    max_age_s: float = MAX_RESUME_AGE_S,
    owner: str | None = None,
) -> Path | None:
    """The newest non-empty handoff file no fresh session has resumed from yet, written
    within ``max_age_s``; ``None`` when there is none. With ``owner``: only when that
    person's sessions reserved or wrote it (a plain start's offer), else ``None``."""
    files = list_handoffs(project_dir)
    if not files:
        return None
    consumed = _state.project_state(project_dir).get("consumed", [])
    consumed_set = set(consumed) if isinstance(consumed, list) else set()
    current = time.time() if now is None else now
    for path in reversed(files):
        if path.name in consumed_set:
            return None  # everything older was written before the last resume
        try:
            st = path.stat()
        except OSError:
            continue
        if st.st_size == 0:
            continue
        if current - st.st_mtime > max_age_s:
            return None
        if owner is not None and _chain.owned_by(project_dir, path.name) != owner:
            return None  # another person's: theirs to continue, or yours on purpose
        return path
    return None


def mark_consumed(project_dir: str | os.PathLike[str], path: Path) -> bool:
    """Record that a fresh session resumed from ``path``; ``False`` when another session
    already did (each handoff is resumed once)."""
    doc = _state.project_state(project_dir)

    def change(data: dict[str, Any]) -> bool:
        consumed = data.get("consumed")
        if not isinstance(consumed, list):
            consumed = []
        if path.name in consumed:
            return False
        consumed.append(path.name)
        data["consumed"] = consumed[-_RESERVED_KEEP:]
        return True

    return doc.update(change)


def drop(project_dir: str | os.PathLike[str], path: Path) -> bool:
    """Set a handoff aside: no session is offered it again (it counts as consumed, and
    is recorded as dropped; the file stays). ``False`` when it was consumed or dropped
    already."""
    doc = _state.project_state(project_dir)

    def change(data: dict[str, Any]) -> bool:
        used = data.get("consumed")
        used = used if isinstance(used, list) else []
        if path.name in used:
            return False
        data["consumed"] = [*used, path.name][-_RESERVED_KEEP:]
        gone = data.get("dropped")
        gone = gone if isinstance(gone, list) else []
        data["dropped"] = [*gone, path.name][-_RESERVED_KEEP:]
        return True

    return doc.update(change)


def dropped(project_dir: str | os.PathLike[str], name: str) -> bool:
    """Whether the handoff ``name`` was set aside (:func:`drop`)."""
    value = _state.project_state(project_dir).get("dropped", [])
    return isinstance(value, list) and name in value


RESUME_ENV = "CTXRELAY_RESUME_HANDOFF"
"""Set by ``ctxrelay handoff continue`` and ``ctxrelay claude run`` for the agent they
start: the handoff file's path. That session's start is given the file whatever its
mode and whoever wrote it (:func:`continued`), as the writer's ``/clear`` would."""


def continued(project_dir: str | os.PathLike[str]) -> Path | None:
    """The handoff :data:`RESUME_ENV` names, when it is a handoff file of this project
    no session has started from; ``None`` otherwise. (A session it is given to holds it
    while it runs: an agent started inside that session inherits the variable and is
    refused by :func:`record_injected`.)"""
    text = os.environ.get(RESUME_ENV)
    if not text or not is_handoff_path(project_dir, text):
        return None
    path = Path(text) if os.path.isabs(text) else Path(project_dir) / text
    if consumed(project_dir, path.name) or not path.is_file():
        return None
    return path


def continue_text(path: Path) -> str:
    """The first prompt of a session started to continue from the handoff ``path``
    (its start hook gives it the file; this names it)."""
    return (
        f"[ctxrelay] Continue the work from the handoff file {path}, starting with the "
        "next step it names."
    )


def consumed(project_dir: str | os.PathLike[str], name: str) -> bool:
    """Whether a session has started from the handoff ``name`` (or it was dropped)."""
    value = _state.project_state(project_dir).get("consumed", [])
    return isinstance(value, list) and name in value


def record_reserved(project_dir: str | os.PathLike[str], path: Path, by: _chain.ChainLink) -> None:
    """The Stop hook asked session ``by`` to write ``path``: its writer, should the Stop
    that sees the file never run (a crash during the write)."""

    def change(data: dict[str, Any]) -> None:
        _chain.own(data, path.name)
        links = data.get("reserved_by")
        links = links if isinstance(links, dict) else {}
        links[path.name] = by.to_json()
        data["reserved_by"] = dict(list(links.items())[-_RESERVED_KEEP:])

    _state.project_state(project_dir).update(change)


def reserve(project_dir: str | os.PathLike[str], by: _chain.ChainLink) -> Path:
    """A new handoff path (:func:`new_handoff_path`), recorded as reserved by ``by``: what
    a host asks its agent to write."""
    path = new_handoff_path(project_dir)
    record_reserved(project_dir, path, by)
    return path


def reserved_by(project_dir: str | os.PathLike[str], name: str) -> _chain.ChainLink | None:
    """The session asked to write the handoff ``name`` (see :func:`record_reserved`)."""
    links = _state.project_state(project_dir).get("reserved_by")
    return _chain.ChainLink.from_json(links.get(name)) if isinstance(links, dict) else None


_INJECTED_KEEP = 8


def record_injected(
    project_dir: str | os.PathLike[str],
    path: Path,
    into: _chain.ChainLink,
    *,
    pid: int | None = None,
    since: int | None = None,
) -> bool:
    """A start injected ``path`` into session ``into`` (run by the host's process
    ``pid``; ``since``: its transcript's length then, where the host's rule reads from);
    whether its first request went out with it is read off its transcript later
    (:func:`settle`). ``False``, recording nothing, when another session holds it: given
    it at its start and not started from it yet while its process still runs it
    (:func:`ctxrelay.hooks.chain.holds`). Two starts at once, of any hosts: one takes it."""
    entry = {**into.to_json(), **_chain.process_stamp(pid)}
    if since is not None:
        entry["since"] = since

    def change(data: dict[str, Any]) -> bool:
        table = data.get("injected")
        table = table if isinstance(table, dict) else {}
        links = table.get(path.name)
        links = [x for x in links if isinstance(x, dict)] if isinstance(links, list) else []
        if any(_chain.holds(x, into) for x in links):
            return False
        links = [x for x in links if x.get("session_id") != into.session_id]
        links.append(entry)
        table.pop(path.name, None)
        table[path.name] = links[-_INJECTED_KEEP:]
        data["injected"] = dict(list(table.items())[-_INJECTED_KEEP:])
        return True

    return _state.project_state(project_dir).update(change)


class Injection(NamedTuple):
    """A session a start gave a handoff to (:func:`record_injected`)."""

    link: _chain.ChainLink
    since: int | None
    """Its transcript's length then, where recorded."""


def injections(project_dir: str | os.PathLike[str], name: str) -> list[Injection]:
    """The sessions a start gave the handoff ``name`` to, oldest first."""
    table = _state.project_state(project_dir).get("injected")
    entries = table.get(name) if isinstance(table, dict) else None
    out: list[Injection] = []
    for value in entries if isinstance(entries, list) else ():
        link = _chain.ChainLink.from_json(value)
        since = value.get("since") if isinstance(value, dict) else None
        if link is not None:
            known = isinstance(since, int) and not isinstance(since, bool) and since >= 0
            out.append(Injection(link, since if known else None))
    return out


def injected_into(project_dir: str | os.PathLike[str], name: str) -> list[_chain.ChainLink]:
    """The sessions a start gave the handoff ``name`` to, oldest first."""
    return [x.link for x in injections(project_dir, name)]


StartedCheck = StartedRule
"""A host's test of whether the session of a transcript has started from a handoff file:
its first exchange went out with the file (the host's own transcript rule), given where
the transcript stood when the file was given (``None``: not recorded)."""


def settle(
    project_dir: str | os.PathLike[str], host: str, started: StartedCheck
) -> list[tuple[str, _chain.ChainLink]]:
    """Mark consumed each injected handoff whose session has started from it, recording
    the chain link; returns those newly settled as (name, session). A session of ``host``
    is judged by ``started`` (the host's own rule), one of another host by that host's
    rule in :func:`ctxrelay.transcripts.started`, so a handoff a Codex thread took is
    used up at a Claude Code start too. Each host runs it at each start and at the end of
    a turn: a session killed after its first request, before any hook of its own ran
    again, still consumes it."""
    table = _state.project_state(project_dir).get("injected")
    if not isinstance(table, dict) or not table:
        return []
    folder = handoff_dir(project_dir)
    done: list[tuple[str, _chain.ChainLink]] = []
    for name in list(table):
        if not isinstance(name, str) or consumed(project_dir, name):
            continue
        for link, since in injections(project_dir, name):
            file = folder / name
            if (
                started(link.transcript_path, file, since)
                if link.host == host
                else _started(link.host, link.transcript_path, file, since)
            ):
                if mark_consumed(project_dir, folder / name):
                    _chain.record_started(project_dir, name, link)
                    done.append((name, link))
                break

    def prune(data: dict[str, Any]) -> None:
        table = data.get("injected")
        if isinstance(table, dict):
            gone = set(data.get("consumed") or [])
            data["injected"] = {k: v for k, v in table.items() if k not in gone}

    _state.project_state(project_dir).update(prune)
    return done


def settle_injected(
    project_dir: Path,
    doc: _state.StateFile,
    injected: object,
    settle: Callable[[Path], object],
) -> None:
    """When this session was given a handoff at its start (``injected``: its name, from
    the session's document ``doc``): settle the project's handoffs by the host's own
    ``settle`` (:func:`settle` with its rule) and, once that one is consumed, forget it."""
    if isinstance(injected, str) and injected:
        settle(project_dir)
        if consumed(project_dir, injected):
            doc.reset("injected")


def writer_of(project_dir: str | os.PathLike[str], name: str) -> _chain.ChainLink | None:
    """The session that wrote the handoff ``name`` (its ``Stop`` saw the file), else the
    one asked to write it (a crash during the write), else ``None``."""
    return _chain.written_by(project_dir, name) or reserved_by(project_dir, name)


class HandoffInfo(NamedTuple):
    """A handoff file with what the project's records say of it (``ctxrelay handoff
    list``)."""

    path: Path
    bytes: int
    mtime: float
    writer: _chain.ChainLink | None
    """The session that wrote it (or was asked to)."""
    started: _chain.ChainLink | None
    """The session that started from it."""
    used: bool
    """Started from or dropped: no start offers it."""
    dropped: bool
    holders: tuple[_chain.ChainLink, ...]
    """Sessions given it at their start that have not started from it yet and still run."""
    mine: bool
    """Reserved or written by a session of this state directory's person."""


def describe(project_dir: str | os.PathLike[str]) -> list[HandoffInfo]:
    """Every handoff file of the project, oldest first, with its records."""
    data = _state.project_state(project_dir).read()
    me = _state.owner()
    used = data.get("consumed")
    used_set = set(used) if isinstance(used, list) else set()
    gone = data.get("dropped")
    gone_set = set(gone) if isinstance(gone, list) else set()
    owners = data.get("owners")
    owners = owners if isinstance(owners, dict) else {}
    table = data.get("injected")
    table = table if isinstance(table, dict) else {}
    out: list[HandoffInfo] = []
    for path in list_handoffs(project_dir):
        try:
            st = path.stat()
        except OSError:
            continue
        name = path.name
        nobody = _chain.ChainLink("", "", "")
        links = table.get(name)
        held = tuple(
            link
            for value in (links if isinstance(links, list) else ())
            if _chain.holds(value, nobody) and (link := _chain.ChainLink.from_json(value))
        )
        out.append(
            HandoffInfo(
                path=path,
                bytes=st.st_size,
                mtime=st.st_mtime,
                writer=writer_of(project_dir, name),
                started=_chain.started_by(project_dir, name),
                used=name in used_set,
                dropped=name in gone_set,
                holders=() if name in used_set else held,
                mine=owners.get(name) == me,
            )
        )
    return out


def display(project_dir: str | os.PathLike[str], path: Path) -> str:
    try:
        return str(path.relative_to(project_dir))
    except ValueError:
        return str(path)


NEXT_STEP_MAX_CHARS = 600
"""Most of a handoff's next step quoted in a resume prompt."""


def resume_text(
    path: Path,
    *,
    next_step: str | None,
    project_dir: str | os.PathLike[str],
    inline: bool = False,
    writer: _chain.ChainLink | None = None,
) -> str:
    """What every host's resume prompt says of the file: where it is, which agent's
    session wrote it (``writer``), that it is read first (``inline``: that its content
    follows, as a start hook injects it), and the next step it names (quoted, at most
    :data:`NEXT_STEP_MAX_CHARS`)."""
    step = (next_step or "").strip()
    if len(step) > NEXT_STEP_MAX_CHARS:
        step = step[:NEXT_STEP_MAX_CHARS].rstrip() + "…"
    then = (
        f"The next step it names:\n\n{step}\n\nStart with that step."
        if step
        else "Start with the next step it names."
    )
    by = f", written by {_chain.describe(writer)}" if writer is not None else ""
    return (
        "[ctxrelay] Resume the work of the previous session from its handoff file "
        f"{display(project_dir, path)} (full path: {path}{by}). "
        + ("Its content follows" if inline else "Read it first")
        + "; it holds the goal, the state, the decisions, the files touched and the "
        "commands that matter. "
        f"{then} Do not redo finished work; check the files it names when unsure."
    )


MANUAL_NOTE = (
    "[ctxrelay] The context is at the handoff slider. When the person types handoff, you "
    "will be asked to write a handoff file; until then carry on, keeping your steps small."
)
"""The note a host in manual mode gives the model at the prompt after the slider."""


class SliderReading(NamedTuple):
    """A main session's context now, as the phrase a host says it in, and whether it is
    at the handoff slider."""

    phrase: str
    due: bool


def reading(tokens: int, window: int, threshold: float) -> SliderReading:
    """``tokens`` of context in a ``window``-token window against the slider at
    ``threshold`` percent (the policy core's handoff target)."""
    target = main_budget(window, threshold).handoff_target
    due = bool(main_triggers(tokens, target, task_completed=False))
    percent = 100 * tokens / window
    phrase = f"the context is {tokens:,} tokens, {percent:.0f}% of the {window:,}-token window"
    return SliderReading(phrase, due)


def manual_notice(phrase: str, fresh: str) -> str:
    """The one line a host in manual mode shows the person at the slider; ``fresh`` is
    what the work continues in (``session``, ``context``)."""
    return (
        f"ctxrelay: {phrase}. Type handoff to have the agent write a handoff file and "
        f"continue in a fresh {fresh}."
    )


def is_written(path: Path) -> bool:
    """Whether the handoff file asked for at ``path`` is there, with something in it."""
    try:
        return path.is_file() and path.stat().st_size > 0
    except OSError:
        return False


def resume_prompt(
    project_dir: str | os.PathLike[str], path: Path, writer: _chain.ChainLink | None = None
) -> str | None:
    """A fresh context's first prompt from the handoff ``path``: :func:`resume_text` with
    the file's content inline (at most :data:`INJECT_MAX_BYTES`, a longer file said so);
    ``None`` when the file is missing or empty."""
    handoff = read_handoff(path)
    if handoff is None:
        return None
    head = resume_text(
        path, next_step=handoff.next_step, project_dir=project_dir, inline=True, writer=writer
    )
    cut = "\n\n(The file is longer; read the rest of it.)" if handoff.truncated else ""
    return f"{head}\n\n{handoff.text}{cut}"
