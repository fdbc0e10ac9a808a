"""The values every reader returns."""

from __future__ import annotations

import pickle
from dataclasses import fields

from ctxrelay.transcripts import Response, Usage


def test_a_response_pickles_as_its_arguments_with_every_field() -> None:
    # The analyzer's workers send reports back pickled: every field, none left at a
    # default by a __reduce__ that forgot one.
    usage = Usage(1, 2, 3, 4, 5)
    response = Response("msg_1", "claude-opus-4-6", usage, True, 2, "2026-01-01T00:00:00Z", "a1")
    for value in (usage, response):
        assert len(value.__reduce__()[1]) == len(fields(value))
        assert pickle.loads(pickle.dumps(value)) == value
