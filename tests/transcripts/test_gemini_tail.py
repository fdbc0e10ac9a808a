"""Whether a Gemini session file still holds a tool call's result, from the length the
file had when the call's ``AfterTool`` hook ran: the re-read rule's question. The files
are written as the CLI 0.61.0 writes them (``tests/gemini/_session.py``: the shapes of a
real run with ``/rewind`` and ``/compress`` in the UI)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from ctxrelay.transcripts import gemini_result_kept
from tests.gemini._session import SessionFile

NOTES = "the notes line\n" * 30


class _Read(NamedTuple):
    before: str  # the prompt before the read's
    prompt: str  # the read's prompt
    start: int  # the file's length at the read's AfterTool


def _read(session: SessionFile) -> _Read:
    """Two prompts, the second one's turn reads notes.txt: (the first prompt's id, the
    second's, the file's length at the read's ``AfterTool``)."""
    first = session.user("hello first")
    first_id = first.lines[-2]["id"]
    session.gemini(4_000, said="ok")
    session.user("READ notes please")
    prompt = session.lines[-2]["id"]
    session.call("read_file", {"file_path": "notes.txt"}, NOTES)
    session.gemini(5_000, said="read it")
    return _Read(first_id, prompt, session.after_tool)


def test_a_result_still_in_the_conversation_is_kept(tmp_path: Path) -> None:
    session = SessionFile()
    start = _read(session).start
    session.user("and now?").gemini(5_100, said="done")
    assert gemini_result_kept(session.write(tmp_path / "s.jsonl"), start) is True


def test_a_rewind_to_the_reads_prompt_or_before_removes_it(tmp_path: Path) -> None:
    for before in (False, True):  # to the read's own prompt, to the one before
        session = SessionFile()
        read = _read(session)
        session.rewind(read.before if before else read.prompt)
        assert gemini_result_kept(session.write(tmp_path / "s.jsonl"), read.start) is False
        # sent again after the rewind: the new turn is no reason to keep the old read
        session.user("READ notes please").gemini(4_000, said="no tool this time")
        assert gemini_result_kept(session.write(tmp_path / "s.jsonl"), read.start) is False


def test_a_rewind_to_a_later_prompt_keeps_it(tmp_path: Path) -> None:
    session = SessionFile()
    start = _read(session).start
    session.user("later").gemini(5_100, said="fine")
    session.rewind(session.lines[-3]["id"])
    assert gemini_result_kept(session.write(tmp_path / "s.jsonl"), start) is True


def test_a_compression_keeps_it_only_while_its_message_is_kept(tmp_path: Path) -> None:
    session = SessionFile()
    start = _read(session).start
    session.compress()  # summarized: everything before it goes
    assert gemini_result_kept(session.write(tmp_path / "s.jsonl"), start) is False

    session = SessionFile()
    start = _read(session).start
    session.compress(keep=3)  # the call, its result and the answer kept as they were
    assert gemini_result_kept(session.write(tmp_path / "s.jsonl"), start) is True
    session.user("later").gemini(5_100, said="fine")
    assert gemini_result_kept(session.write(tmp_path / "s.jsonl"), start) is True
    session.rewind(session.lines[-3]["id"])  # to the prompt after the compression
    assert gemini_result_kept(session.write(tmp_path / "s.jsonl"), start) is True
    session.user("later").gemini(5_100, said="fine")
    later = session.messages()
    assert later[-3]["content"] == "read it"
    session.rewind(later[-3]["id"])  # to the answer after the result, kept by compression
    assert gemini_result_kept(session.write(tmp_path / "s.jsonl"), start) is True
    # a rewind past the compression to the kept result's own message removes it
    assert "functionResponse" in session.messages()[-1]["content"][0]
    session.rewind(session.messages()[-1]["id"])
    assert gemini_result_kept(session.write(tmp_path / "s.jsonl"), start) is False


def test_a_result_never_written_or_cleared_is_not_kept(tmp_path: Path) -> None:
    session = SessionFile()
    start = _read(session).start
    cut = SessionFile()
    cut.lines = session.lines[:-4]  # up to the call's first record: it never completed
    assert cut.size() == start
    assert gemini_result_kept(cut.write(tmp_path / "cut.jsonl"), start) is False
    session.clear().user("fresh")
    assert gemini_result_kept(session.write(tmp_path / "s.jsonl"), start) is False


def test_a_file_that_cannot_tell_says_so(tmp_path: Path) -> None:
    session = SessionFile()
    start = _read(session).start
    path = session.write(tmp_path / "s.jsonl")
    assert gemini_result_kept(tmp_path / "missing.jsonl", start) is None
    assert gemini_result_kept(path, session.size() + 1) is None  # shorter than the mark
    assert gemini_result_kept(path, start + 1) is None  # not a line's start
    assert gemini_result_kept(path, start, max_bytes=100) is None  # too much since
    assert gemini_result_kept(path, -1) is None  # the length was not known
    with path.open("ab") as f:
        f.write(b'{"id":"cut mid-li')
    assert gemini_result_kept(path, start) is None
