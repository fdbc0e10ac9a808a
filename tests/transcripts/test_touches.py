"""The file tool calls read in the same pass as a session file's bill are the ones the
touch reader finds alone, and they survive their packing."""

from __future__ import annotations

from ctxrelay.transcripts import read_touches, unpack_touches
from ctxrelay.transcripts._formats import read_file, scan_file
from ctxrelay.transcripts._pass import RawTranscript
from tests.conftest import corpus_path

SPOTTER = "corpora/claude-code-transcripts/spotter"


def test_one_pass_reads_the_touches_a_pass_of_their_own_reads() -> None:
    found = 0
    for file in sorted(corpus_path(SPOTTER).rglob("*.jsonl")):
        agent = file.name.startswith("agent-")
        raw = read_file(str(file), agent=agent)
        assert isinstance(raw, RawTranscript)
        if agent:
            assert raw.touches is None  # a subagent's chain is never replayed
            continue
        assert raw.touches is not None
        alone = read_touches(file)
        assert unpack_touches(raw.touches) == alone
        assert scan_file(file).touches == raw.touches
        found += sum(len(t) for t in alone.by_response.values())
    assert found > 100  # the corpus's sessions read and edit files
