"""A session's handoff job: its phases as stored strings, its allowed transitions, and
the documents the previous version wrote, read unchanged."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxrelay.hooks.job import HandoffJob, HandoffPhase, JobTransitionError

PATH = "/p/.ctxrelay/handoff/handoff-20261201T000000Z.md"
REASON = "the context is 121,000 tokens, 60% of the 200,000-token window"

# Each shape of the job the previous version's hooks wrote (stop.py's dicts, the
# session start's offer, the mod channel's note), as they sit in the session document.
PREVIOUS: list[dict[str, Any]] = [
    {
        "phase": "writing",
        "path": PATH,
        "reason": REASON,
        "waited": 0,
        "retries": 0,
        "triggers": ["context"],
    },
    {
        "phase": "writing",
        "path": PATH,
        "reason": REASON,
        "waited": 1,
        "retries": 0,
        "triggers": ["context", "task"],
    },
    {
        "phase": "ready",
        "path": PATH,
        "reason": REASON,
        "waited": 0,
        "retries": 1,
        "triggers": ["task"],
        "automod": "sent",
    },
    {"phase": "ready", "path": PATH},
    {"phase": "ready", "path": PATH, "automod": "absent"},
    {
        "phase": "ready",
        "path": PATH,
        "reason": REASON,
        "waited": 1,
        "retries": 0,
        "triggers": ["context"],
        "automod": "offered",
    },
    {
        "phase": "used",
        "path": PATH,
        "reason": REASON,
        "waited": 0,
        "retries": 0,
        "triggers": ["context"],
    },
    {
        "phase": "failed",
        "path": PATH,
        "reason": REASON,
        "waited": 2,
        "retries": 1,
        "triggers": ["context"],
    },
]


@pytest.mark.parametrize("stored", PREVIOUS, ids=lambda d: f"{d['phase']}-{len(d)}")
def test_a_job_the_previous_version_wrote_reads_and_writes_back_unchanged(
    stored: dict[str, Any],
) -> None:
    text = json.dumps(stored)  # as it sits on disk
    job = HandoffJob.from_json(json.loads(text))
    assert job is not None
    assert job.phase == stored["phase"]  # a StrEnum: equal to the stored string
    assert job.phase.value == stored["phase"]
    assert job.path == PATH
    assert json.loads(json.dumps(job.to_json())) == stored


def test_what_a_job_writes_is_what_the_previous_version_wrote() -> None:
    asked = HandoffJob.asked(PATH, reason=REASON, triggers=("context",))
    assert asked.to_json() == PREVIOUS[0]
    assert asked.waiting().to_json()["waited"] == 1
    ready = asked.retried().written(PATH).told("sent")
    assert ready.to_json() == {**PREVIOUS[0], **PREVIOUS[2], "triggers": ["context"]}
    assert HandoffJob.found(PATH).to_json() == PREVIOUS[3]
    assert HandoffJob.found(PATH).told("absent").to_json() == PREVIOUS[4]
    assert asked.used(PATH).to_json() == PREVIOUS[6]
    failed = asked.retried().waiting().failed()
    assert failed.to_json() == {**PREVIOUS[7], "waited": 2, "retries": 1}
    # The phases are the strings on disk, and only those.
    assert [p.value for p in HandoffPhase] == ["writing", "ready", "used", "failed"]


def test_unknown_keys_are_kept_and_damaged_jobs_are_no_job() -> None:
    stored = {"phase": "ready", "path": PATH, "later": {"x": 1}}
    job = HandoffJob.from_json(stored)
    assert job is not None
    assert job.told("sent").to_json() == {**stored, "automod": "sent"}
    damaged: object
    for damaged in (None, [], "ready", {}, {"phase": "done"}, {"phase": 1}):
        assert HandoffJob.from_json(damaged) is None
    odd = HandoffJob.from_json({"phase": "writing", "path": 3, "waited": "2", "retries": True})
    assert odd == HandoffJob(HandoffPhase.WRITING, None, None, 2, 0)


def test_only_the_allowed_transitions() -> None:
    asked = HandoffJob.asked(PATH, reason=REASON, triggers=("context",))
    ready = asked.written(PATH)
    assert ready.phase is HandoffPhase.READY
    assert ready.offered().automod == "offered"
    assert asked.offered().phase is HandoffPhase.READY  # the writer resumed mid-write
    assert asked.failed().offered().phase is HandoffPhase.READY
    with pytest.raises(JobTransitionError, match="phase ready"):
        ready.waiting()
    for step in (ready.retried, ready.failed):
        with pytest.raises(JobTransitionError):
            step()
    with pytest.raises(JobTransitionError):
        ready.written(PATH)
    with pytest.raises(JobTransitionError):
        asked.told("sent")  # the mod hears of a ready handoff only
    with pytest.raises(JobTransitionError, match="told of this handoff already"):
        ready.told("sent").told("sent")
    with pytest.raises(JobTransitionError):
        asked.used(PATH).offered()
    # Frozen: a transition is a new job.
    with pytest.raises(AttributeError):
        asked.phase = HandoffPhase.READY  # type: ignore[misc]
