"""A session's handoff job: the handoff its host's ``Stop`` hook asked for or saw written,
in one of four phases, with the transitions between them.

The job lives in the session's state document (:mod:`ctxrelay.hooks.state`, key
``handoff`` of a Claude Code session) as a JSON object; the phase is stored as its string
value (``"writing"``, ``"ready"``, ``"used"``, ``"failed"``), the same strings every
earlier version wrote, so a document written before this module existed reads unchanged
(:meth:`HandoffJob.from_json`) and a job written now reads in an earlier version. Keys a
job does not know are kept as they are.

The transitions::

    (none) ──asked──▶ writing ──waiting / retried──▶ writing
                         │ ──written──▶ ready ──told / offered──▶ ready
                         │ ──used────▶ used
                         │ ──failed──▶ failed
                         └ ──offered─▶ ready (the writer resumed after a crash)
                                failed ──offered─▶ ready (its file appeared after all)
    (none) ──found──▶ ready (a handoff written with no job: the skill, or on its own)

Any other step raises :class:`JobTransitionError`: a caller checks the phase first.
Imports only the standard library: the ``Stop`` hook's quiet path reads the phase.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from ctxrelay.errors import CtxrelayError

__all__ = ["HandoffJob", "HandoffPhase", "JobTransitionError"]


class HandoffPhase(StrEnum):
    """Where a session's handoff job is (stored as the value)."""

    WRITING = "writing"
    """The hook asked for the file (auto mode) and waits for it."""
    READY = "ready"
    """The file is written; the chain continues from it in a fresh session."""
    USED = "used"
    """Written, but another session started from it before this one's hook saw it."""
    FAILED = "failed"
    """No file appeared after the write prompt and its retries."""


class JobTransitionError(CtxrelayError):
    """A handoff job was asked for a step its phase does not allow."""


_PHASES = frozenset(p.value for p in HandoffPhase)
_KNOWN = frozenset(("phase", "path", "reason", "waited", "retries", "triggers", "automod"))


def _count(value: object) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(value, 0)
    if isinstance(value, str) and value.isdigit():
        return int(value)  # tolerated, as ``int(...)`` of the earlier readers did
    return 0


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class HandoffJob:
    """One session's handoff job; each transition returns a new job."""

    phase: HandoffPhase
    path: str | None = None
    """The handoff file: the one asked for (``writing``), or the one written."""
    reason: str | None = None
    """Why the hook asked for it (repeated in the retried write prompt)."""
    waited: int = 0
    """Turns waited for the file since the write prompt (or its retry)."""
    retries: int = 0
    """Write prompts sent again."""
    triggers: tuple[str, ...] | None = None
    """The triggers that started it (``MainTrigger`` values)."""
    automod: str | None = None
    """What the auto-handoff mod was told of the ready handoff (``sent``, ``absent``,
    ``offered``; :mod:`ctxrelay.claude._mod_channel`); ``None``: not decided yet."""
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)
    """Keys of the stored object this version does not know, written back unchanged."""

    # -- reading and writing -------------------------------------------------------------

    @classmethod
    def from_json(cls, value: object) -> HandoffJob | None:
        """The job stored as ``value``; ``None`` for no job, or one whose phase is not
        one of :class:`HandoffPhase` (a damaged document)."""
        if not isinstance(value, Mapping):
            return None
        stored = value.get("phase")
        if not isinstance(stored, str) or stored not in _PHASES:
            return None
        phase = HandoffPhase(stored)
        triggers = value.get("triggers")
        return cls(
            phase=phase,
            path=_text(value.get("path")),
            reason=_text(value.get("reason")),
            waited=_count(value.get("waited")),
            retries=_count(value.get("retries")),
            triggers=(
                tuple(t for t in triggers if isinstance(t, str))
                if isinstance(triggers, list)
                else None
            ),
            automod=_text(value.get("automod")),
            extra={k: v for k, v in value.items() if k not in _KNOWN},
        )

    def to_json(self) -> dict[str, Any]:
        """The stored object: the phase as its string, and the fields a job of this kind
        has had since the first version (the counters from the write prompt on)."""
        out: dict[str, Any] = {**self.extra, "phase": self.phase.value}
        if self.path is not None:
            out["path"] = self.path
        if self.reason is not None:
            out["reason"] = self.reason
        if self.reason is not None or self.phase is HandoffPhase.WRITING or self.waited:
            out["waited"] = self.waited
        if self.reason is not None or self.retries:
            out["retries"] = self.retries
        if self.triggers is not None:
            out["triggers"] = list(self.triggers)
        if self.automod is not None:
            out["automod"] = self.automod
        return out

    # -- the phase -------------------------------------------------------------------------

    @property
    def writing(self) -> bool:
        return self.phase is HandoffPhase.WRITING

    @property
    def ready(self) -> bool:
        return self.phase is HandoffPhase.READY

    def _require(self, step: str, *phases: HandoffPhase) -> None:
        if self.phase not in phases:
            allowed = " or ".join(p.value for p in phases)
            raise JobTransitionError(
                f"a handoff job cannot be {step} in phase {self.phase.value} (only {allowed})"
            )

    # -- transitions ---------------------------------------------------------------------

    @classmethod
    def asked(cls, path: str, *, reason: str, triggers: tuple[str, ...]) -> HandoffJob:
        """The hook asked for the handoff file ``path`` (the write prompt went out)."""
        return cls(HandoffPhase.WRITING, path, reason, 0, 0, triggers)

    @classmethod
    def found(cls, path: str) -> HandoffJob:
        """A handoff file written with no job asking for it (the skill, or Claude on its
        own): ready as it is."""
        return cls(HandoffPhase.READY, path)

    def waiting(self) -> HandoffJob:
        """One more turn ended without the file."""
        self._require("waiting", HandoffPhase.WRITING)
        return replace(self, waited=self.waited + 1)

    def retried(self) -> HandoffJob:
        """The write prompt went out again; the wait starts over."""
        self._require("retried", HandoffPhase.WRITING)
        return replace(self, waited=0, retries=self.retries + 1)

    def failed(self) -> HandoffJob:
        """No file after the last retry: the turn that gave up is counted too."""
        self._require("failed", HandoffPhase.WRITING)
        return replace(self, phase=HandoffPhase.FAILED, waited=self.waited + 1)

    def written(self, path: str) -> HandoffJob:
        """The file asked for is written (at ``path``)."""
        self._require("written", HandoffPhase.WRITING)
        return replace(self, phase=HandoffPhase.READY, path=path)

    def used(self, path: str) -> HandoffJob:
        """The file asked for was written and another session has started from it
        already: nothing is left to clear for."""
        self._require("used", HandoffPhase.WRITING)
        return replace(self, phase=HandoffPhase.USED, path=path)

    def told(self, automod: str) -> HandoffJob:
        """What the auto-handoff mod was told of the ready handoff (once)."""
        self._require("told", HandoffPhase.READY)
        if self.automod is not None:
            raise JobTransitionError(f"the mod was told of this handoff already ({self.automod})")
        return replace(self, automod=automod)

    def offered(self) -> HandoffJob:
        """A start offered the writer its own file (resumed after a crash, or the file
        appeared after the hook gave up): ready, and left for the user to ``/clear``,
        not the mod."""
        self._require("offered", HandoffPhase.WRITING, HandoffPhase.READY, HandoffPhase.FAILED)
        return replace(self, phase=HandoffPhase.READY, automod="offered")
