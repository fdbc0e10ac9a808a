"""Sizes the runtime owns that the analyzer replays, in a module light enough for either
to import: importing anything under ``ctxrelay.runtime`` loads the whole runtime, which
``ctxrelay analyze`` does not need. ``ctxrelay.runtime.tools`` re-exports them."""

from __future__ import annotations

from typing import Final

__all__ = ["NOTES_MAX_BYTES"]

NOTES_MAX_BYTES: Final = 8 * 1024
"""How much of the notes file a new window's lead-in carries (DESIGN §4)."""
