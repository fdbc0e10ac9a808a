"""A host's JSON settings file as install treats it: read, refusing in one sentence (and
changing nothing) what it cannot parse; written atomically, in one format; backed up
before install's first change; and put back with its own bytes when its content is
what it was (the user's formatting, not ours).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxrelay.errors import ConfigError

__all__ = [
    "BACKUP_MARK",
    "backup",
    "dump",
    "load_json",
    "parse_json",
    "read_text",
    "restore",
    "same_bytes",
    "write_json",
    "write_text",
]

BACKUP_MARK = ".ctxrelay-backup-"
"""What a backup's name adds to the file's: ``settings.json.ctxrelay-backup-<time>``."""


def read_text(path: Path) -> str | None:
    """The file's text; ``None`` when there is no file. Refuses one it cannot read."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path} ({exc}); nothing was changed") from None


def parse_json(path: Path, text: str | None) -> dict[str, Any]:
    """``text`` (of ``path``) as an object; ``{}`` for no file or an empty one. Refuses,
    in one sentence, anything else."""
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(
            f"cannot parse {path} as JSON ({exc}); fix it or move it aside and run "
            "this again, nothing was changed"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is not a JSON object; nothing was changed")
    return data


def load_json(path: Path) -> dict[str, Any]:
    """The file as an object; ``{}`` when it does not exist. Refuses (one sentence,
    nothing changed) anything it cannot parse."""
    return parse_json(path, read_text(path))


def dump(data: Mapping[str, Any]) -> str:
    """The one format install writes JSON in."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (its folder made when missing), keeping the
    file's permissions (a settings file only its owner may read stays so). A symlink is
    written through: its target changes, the link stays (a dotfiles repository's)."""
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    if path.exists():
        shutil.copymode(path, tmp)
    os.replace(tmp, path)


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    write_text(path, dump(data))


def backup(path: Path, original: str | None = None) -> Path:
    """A backup of ``path`` beside it: ``original`` (the file as install first found
    it) when known, else the file as it is now."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    kept = path.with_name(f"{path.name}{BACKUP_MARK}{stamp}")
    if original is None:
        shutil.copy2(path, kept)
    else:
        kept.write_text(original, encoding="utf-8")
        shutil.copymode(path, kept)
    return kept


def restore(path: Path, data: dict[str, Any], original: str | None) -> None:
    """Write ``data`` to ``path``: the ``original`` text when it holds the same data
    (the user's own bytes back), else JSON."""
    if original is not None:
        try:
            same = (json.loads(original) if original.strip() else {}) == data
        except ValueError:
            same = False
        if same:
            write_text(path, original)
            return
    write_json(path, data)


def same_bytes(a: Path, b: Path) -> bool:
    try:
        return a.read_bytes() == b.read_bytes()
    except OSError:
        return False
