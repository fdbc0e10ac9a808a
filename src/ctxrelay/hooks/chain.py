"""The handoff chain of a project's sessions, whichever host ran each: which session wrote a
handoff file, which one started from it, and which session a host's process runs now.

A host names nothing that links a fresh session to the one it replaced (Claude Code's
``/clear`` starts a new ``session_id`` whose ``SessionStart`` payload does not name the old
one). So the hooks record the links as they see them: the ``Stop`` hook that sees a
handoff file written records its writer (:func:`record_written`), and the hook that sees a
fresh session's first response to the file records that session as started from it
(:func:`record_started`). Where a host's process outlives its sessions (Claude Code's
``CLAUDE_PID``), :func:`record_process` records which session it runs now.

Every link names its host (:class:`ChainLink`), so each host reads only transcripts it
knows, and :func:`chain` follows the links back: a session, the session that wrote the
handoff it started from, and so on, oldest first. A session that did not start from a
handoff (a plain ``/clear``, a fresh start) has no predecessor, which is the privacy floor
of ``session_history``: nothing before a ``/clear`` the user made without a handoff,
nothing of another project.

The links live in the project's document beside the handoff files
(:func:`ctxrelay.hooks.state.project_state`, bounded), with whose sessions reserved or
wrote each handoff (:func:`owned_by`); one small document per host process id holds the
session it runs, with the process's start time where the system tells it (so a recycled
pid is not taken for the old process).
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

from ctxrelay.hooks import state as _state

__all__ = [
    "AGENTS",
    "KEEP",
    "ChainLink",
    "agent",
    "chain",
    "current",
    "current_project",
    "describe",
    "holds",
    "host_process",
    "own",
    "owned_by",
    "process_stamp",
    "record_process",
    "record_started",
    "record_written",
    "running",
    "started_by",
    "started_from",
    "written_by",
]

KEEP = 200
"""Most handoff links kept per project (the oldest are dropped first)."""

_MAX_DEPTH = 1000


class ChainLink(NamedTuple):
    """One session of a chain."""

    host: str
    """The host that ran the session (``claude``, ``codex``): who can read its transcript."""
    session_id: str
    transcript_path: str
    """The session's transcript (Claude Code's JSONL, Codex's rollout), as its host's
    payload names it; an OpenCode session's database and id
    (:func:`ctxrelay.transcripts.session_locator`)."""

    def to_json(self) -> dict[str, str]:
        return {
            "host": self.host,
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
        }

    @classmethod
    def from_json(cls, value: object) -> ChainLink | None:
        if not isinstance(value, dict):
            return None
        session_id, transcript = value.get("session_id"), value.get("transcript_path")
        if not isinstance(session_id, str) or not session_id or not isinstance(transcript, str):
            return None
        host = value.get("host")
        if not isinstance(host, str) or not host:
            host = _legacy_host(transcript)
        return cls(host, session_id, transcript)


AGENTS: dict[str, str] = {
    "claude": "Claude Code",
    "codex": "Codex",
    "gemini": "Gemini CLI",
    "opencode": "OpenCode",
}
"""Each host's name as people know the agent (a new host adds its entry)."""


def agent(host: str) -> str:
    """The agent a host name stands for (the name itself for a host this table lacks)."""
    return AGENTS.get(host, host)


def describe(link: ChainLink) -> str:
    """A session as a sentence names it: ``a Codex session (<id>)``, ``an OpenCode
    session (<id>)``."""
    name = agent(link.host)
    article = "an" if name[:1] in "AEIOU" else "a"
    return f"{article} {name} session ({link.session_id})"


def _legacy_host(transcript_path: str) -> str:
    """The host of a link the previous version wrote, which named none: Codex's rollouts
    are ``rollout-*.jsonl``; every other link was Claude Code's."""
    return "codex" if os.path.basename(transcript_path).startswith("rollout-") else "claude"


# -- the process ------------------------------------------------------------------------


def _process_path(host: str, pid: int) -> str:
    return os.path.join(_state.host_dir(host), "processes", f"{int(pid)}.json")


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (Linux), else ``None``."""
    try:
        with open(f"/proc/{int(pid)}/stat", encoding="ascii", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return None
    return text.rpartition(")")[2].split()


def _started_at(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (Linux ``/proc``), else ``None``."""
    fields = _stat(pid)
    return fields[19] if fields is not None and len(fields) > 19 else None


def _alive(pid: int) -> bool:
    """Whether the process ``pid`` runs: it exists, and is not a zombie (killed, not yet
    reaped by its parent)."""
    if pid <= 0:
        return False  # 0 and negative pids signal process groups
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it exists
    except OSError:
        return False
    fields = _stat(pid)
    return not fields or fields[0] not in ("Z", "X")


def _same_process(data: dict[str, Any], pid: int) -> bool:
    started = _started_at(pid)
    return started is None or data.get("started_at") in (None, started)


def record_process(
    pid: int, project_dir: str | os.PathLike[str], link: ChainLink
) -> ChainLink | None:
    """At every main-session start: the session ``link`` that the host's process ``pid``
    runs now. Returns the one it ran before (after Claude Code's ``/clear``: the session
    cleared), or ``None`` when this process ran none, ran it in another project, or it is
    the same session."""
    project = os.path.realpath(os.fspath(project_dir))
    started = _started_at(pid)
    session_id = link.session_id

    def change(data: dict[str, Any]) -> ChainLink | None:
        before = ChainLink.from_json(data.get("session"))
        same = _same_process(data, pid) and data.get("project") == project
        data.clear()
        data.update({"session": link.to_json(), "project": project, "started_at": started})
        if not same or before is None or before.session_id == session_id:
            return None
        return before

    return _state.update_document(_process_path(link.host, pid), change)


_SHELLS = frozenset(("sh", "bash", "dash", "zsh", "ksh", "busybox"))


def host_process() -> int:
    """The process of the host that runs this hook: the nearest ancestor that is not a
    shell (a host runs its hook command through one), by Linux's ``/proc``; elsewhere the
    parent."""
    pid = os.getppid()
    for _ in range(8):
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
                text = fh.read()
        except OSError:
            return pid
        name = text.partition("(")[2].rpartition(")")[0]
        fields = text.rpartition(")")[2].split()
        if name not in _SHELLS or len(fields) < 2 or not fields[1].isdigit():
            return pid
        pid = int(fields[1])
    return pid


def process_stamp(pid: int | None) -> dict[str, Any]:
    """What a record keeps of a host's process so a later hook can tell whether it still
    runs (:func:`holds`): its id and start time."""
    return {} if pid is None else {"pid": int(pid), "pid_started": _started_at(int(pid))}


def holds(value: object, other: ChainLink) -> bool:
    """Whether the recorded session ``value`` (a link with :func:`process_stamp`) holds a
    handoff against ``other``: it is another session, its process still runs (the same
    process, by its start time) and, where that process records the session it runs
    (:func:`record_process`), still runs it."""
    link = ChainLink.from_json(value)
    if link is None or link.session_id == other.session_id or not isinstance(value, dict):
        return False
    pid = value.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or not _alive(pid):
        return False
    if value.get("pid_started") not in (None, _started_at(pid)):
        return False  # the id went to another process
    now = current(link.host, pid)
    return now is None or now.session_id == link.session_id


def current(host: str, pid: int) -> ChainLink | None:
    """The session the process ``pid`` of ``host`` runs now (recorded at its last start),
    or ``None``."""
    data = _state.read_document(_process_path(host, pid))
    if not data or not _same_process(data, pid):
        return None
    return ChainLink.from_json(data.get("session"))


def current_project(host: str, pid: int) -> str | None:
    """The project of the session the process ``pid`` of ``host`` runs now (recorded at
    its last start), or ``None``."""
    data = _state.read_document(_process_path(host, pid))
    project = data.get("project") if data and _same_process(data, pid) else None
    return project if isinstance(project, str) else None


def running(host: str, pid: int) -> ChainLink | None:
    """The session the process ``pid`` of ``host`` runs now, while that process runs:
    ``None`` once it is gone (ended, killed) or its pid belongs to another process (by its
    start time, where the system tells it)."""
    return current(host, pid) if _alive(pid) else None


# -- handoff links ----------------------------------------------------------------------


def own(data: dict[str, Any], handoff_name: str) -> None:
    """In an update of the project's document: the handoff ``handoff_name`` is this
    state directory's person's (:func:`ctxrelay.hooks.state.owner`), unless it is
    someone's already."""
    owners = data.get("owners")
    owners = owners if isinstance(owners, dict) else {}
    if handoff_name not in owners:
        owners[handoff_name] = _state.owner()
        data["owners"] = dict(list(owners.items())[-KEEP:])


def owned_by(project_dir: str | os.PathLike[str], handoff_name: str) -> str | None:
    """The id of the person whose session reserved or wrote the handoff
    ``handoff_name`` (:func:`ctxrelay.hooks.state.owner`), or ``None``."""
    owners = _state.project_state(project_dir).get("owners")
    value = owners.get(handoff_name) if isinstance(owners, dict) else None
    return value if isinstance(value, str) else None


def _record(
    project_dir: str | os.PathLike[str], key: str, handoff_name: str, by: ChainLink
) -> None:
    def change(data: dict[str, Any]) -> None:
        if key == "written":
            own(data, handoff_name)
        links = data.get(key)
        if not isinstance(links, dict):
            links = {}
        if ChainLink.from_json(links.get(handoff_name)) == by:
            return
        links.pop(handoff_name, None)
        links[handoff_name] = by.to_json()  # insertion order: the oldest go first
        data[key] = dict(list(links.items())[-KEEP:])

    _state.project_state(project_dir).update(change)


def record_written(project_dir: str | os.PathLike[str], handoff_name: str, by: ChainLink) -> None:
    """The ``Stop`` hook saw the handoff file ``handoff_name`` written by session ``by``."""
    _record(project_dir, "written", handoff_name, by)


def record_started(project_dir: str | os.PathLike[str], handoff_name: str, by: ChainLink) -> None:
    """Session ``by`` has started from the handoff ``handoff_name``: its first request went
    out with the file."""
    _record(project_dir, "started", handoff_name, by)


def _links(project_dir: str | os.PathLike[str], key: str) -> dict[str, ChainLink]:
    raw = _state.project_state(project_dir).get(key)
    if not isinstance(raw, dict):
        return {}
    out: dict[str, ChainLink] = {}
    for name, value in raw.items():
        link = ChainLink.from_json(value)
        if isinstance(name, str) and link is not None:
            out[name] = link
    return out


def written_by(project_dir: str | os.PathLike[str], handoff_name: str) -> ChainLink | None:
    """The session that wrote the handoff ``handoff_name``, if the Stop hook saw it."""
    return _links(project_dir, "written").get(handoff_name)


def started_by(project_dir: str | os.PathLike[str], handoff_name: str) -> ChainLink | None:
    """The session that started from the handoff ``handoff_name``, if one has."""
    return _links(project_dir, "started").get(handoff_name)


def started_from(project_dir: str | os.PathLike[str], session_id: str) -> str | None:
    """The handoff file a session started from, or ``None``."""
    for name, link in reversed(_links(project_dir, "started").items()):
        if link.session_id == session_id:
            return name
    return None


def chain(project_dir: str | os.PathLike[str], session: str | ChainLink) -> list[ChainLink]:
    """The session and the sessions it was handed off from, oldest first, ending with
    ``session``: started-from then written-by links, within this project only.

    ``session`` is a session id or, better, its :class:`ChainLink` (from
    :func:`current`): a session that no link names (a fresh start, a plain ``/clear``)
    is then its own chain of one; given only an id, such a session gives ``[]``."""
    written = _links(project_dir, "written")
    started = _links(project_dir, "started")
    by_session = {link.session_id: name for name, link in started.items()}
    known = {link.session_id: link for link in (*written.values(), *started.values())}
    if isinstance(session, ChainLink):
        known.setdefault(session.session_id, session)
        session_id = session.session_id
    else:
        session_id = session
    if session_id not in known:
        return []
    out = [known[session_id]]
    seen = {session_id}
    while len(out) < _MAX_DEPTH:
        name = by_session.get(out[-1].session_id)
        writer = written.get(name) if name is not None else None
        if writer is None or writer.session_id in seen:
            break
        seen.add(writer.session_id)
        out.append(writer)
    out.reverse()
    return out
