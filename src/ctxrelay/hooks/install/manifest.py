"""The one record of what install did, and the rules that let uninstall leave a project
as install found it, for every host.

A :class:`Manifest` lives in the folder of the host's settings file, as
``ctxrelay-install.json`` (:data:`MANIFEST_NAME`; ``.claude/``, ``.codex/``,
``$CODEX_HOME/``). Install merges snippets into JSON files through it
(:meth:`Manifest.merge_file`, by the rules of :mod:`ctxrelay.hooks.install.merge`) and
copies files into its folder (:meth:`Manifest.copy_files`); uninstall takes exactly that
out again (:meth:`Manifest.unmerge_file`, :meth:`Manifest.remove_copies`) and then the
manifest (:meth:`Manifest.remove`). The rules:

- a file install created goes, and so does a folder it created, once empty;
- a file whose content is back to what it was gets its own bytes back (the user's
  formatting), from its backup or, for a file without one, the text recorded here;
- at most one backup of a file remains: the one install made before its first change
  (``backup=True``: the host's settings file), and only when the file could not be put
  back as it was;
- a copied file goes only while it is unchanged (one the user edited, or of the user's
  own, stays);
- installing again changes nothing; with another snippet (another environment's
  commands), what the earlier install merged is replaced, never doubled.

The format (``version`` 2)::

    {"version": 2,
     "dir_created": bool,        # the manifest's folder was not there before install
     "merged": {"<file>": {"created": bool, "text": str | null, "dir_created": bool,
                           "backup": str | null, "snippet": {...}, "record": {...}}},
     "files": {"<path under the folder>": "<sha256>"},
     ...}                        # a host's own keys (its commands, what it found)

An older manifest (each host wrote its own format before this one) is read through the
host's ``upgrade``, which returns this format.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxrelay.errors import ConfigError
from ctxrelay.hooks.install import files
from ctxrelay.hooks.install.merge import Ours, Rules, changes, merge, unmerge

__all__ = ["MANIFEST_NAME", "VERSION", "Copies", "FileChange", "Manifest"]

MANIFEST_NAME = "ctxrelay-install.json"
"""What install did, in the folder of the settings file it changed."""

VERSION = 2
"""The manifest format this version writes."""


@dataclass
class FileChange:
    """What merging into (or taking out of) one file did."""

    path: Path
    changed: bool = False
    backup: Path | None = None
    """The backup install made of it (install), or the one that remains (uninstall)."""
    as_found: bool = True
    """After uninstall: the file is as install found it (its own bytes, or gone)."""
    changes: list[str] = field(default_factory=list)
    """What changed, one sentence each."""


@dataclass
class Copies:
    """What copying files in (or taking them out) did, by path under the folder."""

    added: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    """Not ctxrelay's (a file of the user's by that name), or changed since install."""
    removed: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed)


def _digest(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def _obj(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class Manifest:
    """What install did in one ``folder``; :attr:`data` holds the host's own keys too."""

    def __init__(self, folder: Path, data: dict[str, Any] | None = None) -> None:
        self.folder = folder
        self.data: dict[str, Any] = data if data is not None else {}
        self._emptied: list[Path] = []
        self._found_folder = folder.is_dir()

    @property
    def path(self) -> Path:
        return self.folder / MANIFEST_NAME

    @classmethod
    def load(
        cls,
        folder: Path,
        upgrade: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> Manifest:
        """The manifest in ``folder`` (empty when there is none); one an older version
        wrote goes through ``upgrade``. Refuses one it cannot parse, or a newer one."""
        path = folder / MANIFEST_NAME
        data = files.load_json(path)
        version = data.get("version")
        if data and version != VERSION:
            if isinstance(version, int) and version > VERSION:
                raise ConfigError(
                    f"{path} was written by a newer ctxrelay; run that one, nothing was changed"
                )
            data = upgrade(data) if upgrade is not None else {}
        return cls(folder, data)

    def entry(self, path: Path) -> dict[str, Any] | None:
        """What install recorded of the file ``path``; ``None`` when it merged nothing."""
        found = _obj(self.data.get("merged")).get(str(path))
        return found if isinstance(found, dict) else None

    def merge_file(
        self,
        path: Path,
        add: dict[str, Any],
        rules: Rules,
        *,
        ours: Ours | None = None,
        backup: bool = False,
        said: str | None = None,
    ) -> FileChange:
        """Merge ``add`` into the JSON file ``path`` (created when missing) and record it;
        what an earlier install merged there, when it differs, is taken out first.
        ``backup``: keep a backup of the file as found, before install's first change.
        ``said``: the one sentence for a change (else one a merged key). Refuses, in one
        sentence and changing nothing, a file it cannot parse or merge into."""
        text = files.read_text(path)
        current = files.parse_json(path, text)
        entry = self.entry(path) or {
            "created": text is None,
            # The file as found: its backup holds it, else this record does.
            "text": None if backup else text,
            "dir_created": not path.parent.exists(),
            "backup": None,
            "snippet": None,
            "record": None,
        }
        before = entry.get("snippet")
        old = entry.get("record")
        rebased = isinstance(before, dict) and before != add
        try:
            base = current
            if isinstance(before, dict) and rebased:
                base = unmerge(current, before, _obj(old), rules, ours)
            merged, record = merge(base, add, rules, ours)
        except ConfigError as exc:
            raise ConfigError(f"cannot merge into {path}: {exc}; nothing was changed") from None
        change = FileChange(path)
        if merged != current:
            if backup and text is not None and self._backup_of(entry) is None:
                original = entry.get("text")
                made = files.backup(path, original if isinstance(original, str) else None)
                entry["backup"] = str(made)
                change.backup = made
            files.write_json(path, merged)
            change.changed = True
            change.changes = [said] if said else changes(record)
        if not rebased and isinstance(old, dict):
            # Installed again: keep the first install's record of what each key held
            # before ctxrelay.
            record = {**record, **{k: v for k, v in old.items() if k in record}}
        entry["record"] = record
        entry["snippet"] = add
        self.data.setdefault("merged", {})[str(path)] = entry
        return change

    def unmerge_file(
        self,
        path: Path,
        rules: Rules,
        *,
        ours: Ours | None = None,
        default: dict[str, Any] | None = None,
        backup: bool = False,
        what: str = "ctxrelay's settings",
    ) -> FileChange:
        """Take out of ``path`` what :meth:`merge_file` merged (or, with no record of it,
        what equals ``default``), and leave the file as install found it: gone when
        install created it and nothing else is left, its own bytes when its content is
        what it was. ``backup``: without one from install, keep one of the file before
        this changes it. ``what`` names what was taken out, in the sentence."""
        entry = self.entry(path) or {}
        _obj(self.data.get("merged")).pop(str(path), None)
        if entry.get("dir_created"):
            self._emptied.append(path.parent)
        add = entry.get("snippet") if isinstance(entry.get("snippet"), dict) else default
        change = FileChange(path)
        kept = self._backup_of(entry)
        text = files.read_text(path)
        if add is not None and text is not None:
            current = files.parse_json(path, text)
            restored = unmerge(current, add, _obj(entry.get("record")) or None, rules, ours)
            if not restored and entry.get("created"):
                path.unlink()
                change.changed = True
                change.changes.append(f"removed {path} (install created it)")
            elif restored != current:
                original = entry.get("text")
                if not isinstance(original, str) and kept is not None:
                    original = kept.read_text(encoding="utf-8")
                if kept is None and backup:
                    kept = files.backup(path)
                files.restore(path, restored, original if isinstance(original, str) else None)
                change.changed = True
                change.as_found = original is not None and files.read_text(path) == original
                change.changes.append(f"{what} taken out of {path}")
        if kept is not None and path.exists() and files.same_bytes(path, kept):
            kept.unlink()  # the file is as it was: its backup has nothing more to give
        elif kept is not None:
            change.backup = kept
        return change

    def copy_files(self, shipped: Sequence[tuple[str, bytes]]) -> Copies:
        """Copy each ``(path under the folder, content)`` in, keeping a file of the
        user's by that name; one an earlier install copied and this one does not ship
        goes while unchanged."""
        found = _obj(self.data.get("files"))
        done = Copies()
        for rel, content in shipped:
            dest = self.folder / rel
            digest = _digest(content)
            if dest.exists():
                have = _digest(dest.read_bytes())
                if have == digest:
                    found.setdefault(rel, digest)
                    continue
                if have != found.get(rel):
                    done.kept.append(rel)  # the user's own file of that name
                    continue
                # Ours, unchanged since an earlier install wrote it: this install's copy.
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(content)
            found[rel] = digest
            done.added.append(rel)
        for rel in sorted(set(found) - {rel for rel, _ in shipped}):
            dest = self.folder / rel
            if dest.is_file() and _digest(dest.read_bytes()) == found[rel]:
                self._remove_copy(rel)
                done.removed.append(rel)
            if not dest.exists():
                del found[rel]
        self.data["files"] = found
        return done

    def remove_copies(self) -> Copies:
        """Remove each copied file while unchanged (one edited since stays)."""
        done = Copies()
        for rel, digest in sorted(_obj(self.data.pop("files", None)).items()):
            dest = self.folder / rel
            if dest.is_file() and _digest(dest.read_bytes()) == digest:
                self._remove_copy(rel)
                done.removed.append(rel)
            elif dest.exists():
                done.kept.append(rel)
        return done

    def save(self) -> None:
        self.data.setdefault("dir_created", not self._found_folder)
        self.data["version"] = VERSION
        files.write_json(self.path, self.data)

    def remove(self) -> None:
        """Remove the manifest, then each folder install created, once empty (its own
        last)."""
        self.path.unlink(missing_ok=True)
        if self.data.get("dir_created"):
            self._emptied.append(self.folder)
        for folder in self._emptied:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty

    def _backup_of(self, entry: dict[str, Any]) -> Path | None:
        backup = entry.get("backup")
        return Path(backup) if isinstance(backup, str) and Path(backup).is_file() else None

    def _remove_copy(self, rel: str) -> None:
        """Remove one copied file, and its folders up to :attr:`folder` once empty."""
        dest = self.folder / rel
        dest.unlink()
        for parent in dest.parents:
            if parent == self.folder:
                break
            try:
                parent.rmdir()  # only when empty
            except OSError:
                break
