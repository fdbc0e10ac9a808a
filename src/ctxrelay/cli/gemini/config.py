"""``ctxrelay gemini config``: show or set the Gemini host's slider and handoff mode (the
settings themselves: :mod:`ctxrelay.gemini.config`)."""

from __future__ import annotations

from collections.abc import Sequence

from ctxrelay.cli._common import handle_errors
from ctxrelay.cli._handoff_config import config_main
from ctxrelay.gemini.config import ENV_THRESHOLD, SECTION

__all__ = ["main"]


@handle_errors
def main(argv: Sequence[str]) -> int:
    return config_main(
        argv,
        host="gemini",
        label="Gemini",
        section=SECTION,
        env=ENV_THRESHOLD,
        auto="the agent writes the handoff file and the context is cleared and continued "
        "from it by itself",
    )
