"""An agent's re-read record: which files it printed or read in full, with the numbers
each host's re-read rule compares (``[size, mtime_ns, read_at, transcript_bytes]`` or a
host's own), in one small JSON document per session and agent in the host's state
folder: ``{"files": {path: [...]}}`` for the newest :data:`READS_KEPT` files, so it
never grows with the transcript.
"""

from __future__ import annotations

import json
import os

__all__ = ["READS_KEPT", "load_reads", "save_reads"]

READS_KEPT = 64
"""Files remembered per agent; the oldest read is forgotten first."""


def load_reads(path: str) -> dict[str, list[int]]:
    """An agent's re-read record (path -> numbers); empty when it is missing or broken."""
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read().decode())
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    return files if isinstance(files, dict) else {}


def save_reads(path: str, files: dict[str, list[int]]) -> None:
    """Write an agent's re-read record, its newest :data:`READS_KEPT` files, atomically;
    a failure to write only forgets."""
    kept = dict(list(files.items())[-READS_KEPT:])
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(json.dumps({"files": kept}))
        os.replace(tmp, path)  # a parallel Read's record may win: it only forgets one
    except OSError:
        pass
