"""A handler module for the fake host's dispatch tests."""

from __future__ import annotations

from typing import Any

from ctxrelay.hooks.host import Answer


def handle(payload: dict[str, Any]) -> Answer | None:
    what = payload.get("say")
    if what == "boom":
        raise RuntimeError("the handler failed")
    return Answer(deny=what) if isinstance(what, str) else None
