"""Merge a snippet into a host's JSON settings, and take exactly that out again: the one
merge every host's install uses, driven by data (:data:`Rule`), so a new key in a
snippet, or a new host's settings file, needs no new code here.

Each top-level key of the snippet merges by its rule (``rules[key]``, else
:attr:`Rule.VALUE`): :attr:`Rule.LISTS` appends our entries to each list of an object
(hook groups to an event's list, a rule to ``permissions.allow``); :attr:`Rule.LIST`
appends ours to a list; :attr:`Rule.KEYS` sets our sub-keys of an object; :attr:`Rule.VALUE`
sets the key whole. :func:`merge` returns the merged settings and a record of what it
added and what each replaced value held, which :func:`unmerge` reads to put the rest back.

An entry of a :attr:`Rule.LISTS` key that ``ours`` says is ctxrelay's (a hook group
running ctxrelay's hook, whatever command an earlier install, a hand-pasted snippet or
an older layout gave it) is replaced by the snippet's, never doubled, and goes at
uninstall: a hook of ctxrelay's is ctxrelay's to remove.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any

from ctxrelay.errors import ConfigError

__all__ = ["ABSENT", "Ours", "Rule", "Rules", "changes", "merge", "unmerge"]


class Rule(StrEnum):
    """How one key of a snippet merges into the settings."""

    LISTS = "lists"
    """An object of lists: our entries appended to each list (hook groups to an event's)."""
    LIST = "list"
    """A list: our entries appended."""
    KEYS = "keys"
    """An object: our sub-keys set (what each held before is recorded)."""
    VALUE = "value"
    """Set whole (what it held before is recorded)."""


Rules = Mapping[str, Rule]
"""The rule of each snippet key that is not :attr:`Rule.VALUE`."""

Ours = Mapping[str, Callable[[Any], bool]]
"""For a :attr:`Rule.LISTS` key, whether an entry of its lists is ctxrelay's."""

ABSENT: dict[str, Any] = {"absent": True}
"""A record's "there was no value before"."""


def _copy(data: dict[str, Any]) -> dict[str, Any]:
    copied: dict[str, Any] = json.loads(json.dumps(data))
    return copied


def _drop_ours(
    target: dict[str, Any], value: dict[str, Any], is_ours: Callable[[Any], bool]
) -> list[str]:
    """Remove from ``target``'s lists every entry of ctxrelay's that ``value`` does not
    hold (and a second copy of one it does), and the lists left empty by that; the names
    of the lists it changed."""
    changed: list[str] = []
    for name in list(target):
        entries = target[name]
        wanted = value.get(name, [])
        kept: list[Any] = []
        for entry in entries:
            if is_ours(entry) and (entry not in wanted or entry in kept):
                continue
            kept.append(entry)
        if len(kept) != len(entries):
            changed.append(name)
            if kept:
                target[name] = kept
            else:
                del target[name]
    return changed


def merge(
    current: dict[str, Any], add: dict[str, Any], rules: Rules, ours: Ours | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``current`` with ``add`` merged in, and the record of what was added (with each
    replaced value's previous content, for :func:`unmerge`). Refuses, changing nothing, a
    key whose value is not of its rule's shape."""
    merged = _copy(current)
    record: dict[str, Any] = {}
    for key, value in add.items():
        have = merged.get(key)
        rule = rules.get(key, Rule.VALUE)
        if rule is Rule.LISTS:
            if key in merged and not (
                isinstance(have, dict)
                and all(isinstance(have[sub], list) for sub in value if sub in have)
            ):
                raise ConfigError(f"its {key!r} is not an object of lists")
            target = merged.setdefault(key, {})
            is_ours = (ours or {}).get(key)
            replaced = [] if is_ours is None else _drop_ours(target, value, is_ours)
            added: dict[str, list[Any]] = {}
            # Lists install makes, or that hold only ctxrelay's entries: uninstall
            # removes them once empty.
            new_lists = [
                name
                for name in value
                if name not in target
                or (is_ours and target[name] and all(map(is_ours, target[name])))
            ]
            for name, entries in value.items():
                lst = target.setdefault(name, [])
                for entry in entries:
                    if entry not in lst:
                        lst.append(entry)
                        added.setdefault(name, []).append(entry)
            record[key] = {
                "kind": "lists",
                "created": key not in current,
                "added": added,
                "new_events": new_lists,
                "replaced": replaced,
            }
        elif rule is Rule.LIST:
            if key in merged and not isinstance(have, list):
                raise ConfigError(f"its {key!r} is not a list")
            items = merged.setdefault(key, [])
            new = [item for item in value if item not in items]
            items.extend(new)
            record[key] = {"kind": "list", "created": key not in current, "added": new}
        elif rule is Rule.KEYS:
            if key in merged and not isinstance(have, dict):
                raise ConfigError(f"its {key!r} is not an object")
            target = merged.setdefault(key, {})
            previous = {}
            for sub, sub_value in value.items():
                if target.get(sub) != sub_value:
                    previous[sub] = {"was": target[sub]} if sub in target else ABSENT
                    target[sub] = sub_value
            record[key] = {"kind": "keys", "created": key not in current, "previous": previous}
        elif have != value:
            record[key] = {
                "kind": "value",
                "previous": {"was": have} if key in merged else ABSENT,
            }
            merged[key] = value
        else:
            record[key] = {"kind": "value", "previous": None}
    return merged, record


def unmerge(
    current: dict[str, Any],
    add: dict[str, Any],
    record: dict[str, Any] | None,
    rules: Rules,
    ours: Ours | None = None,
) -> dict[str, Any]:
    """Remove what :func:`merge` added. Without a record (lost, or a settings file copied
    from elsewhere), remove what equals the snippet and restore nothing. A value the user
    changed since install stays; an entry ``ours`` says is ctxrelay's goes."""
    out = _copy(current)
    record = record or {}
    for key, value in add.items():
        rec = record.get(key)
        have = out.get(key)
        rule = rules.get(key, Rule.VALUE)
        if rule is Rule.LISTS and isinstance(have, dict):
            # With a record, only the entries install appended (one the user had is kept).
            theirs = rec.get("added", {}) if isinstance(rec, dict) else value
            new_lists = rec.get("new_events", []) if isinstance(rec, dict) else list(value)
            is_ours = (ours or {}).get(key) or (lambda _entry: False)
            for name in list(have):
                lst = have[name]
                if not isinstance(lst, list):
                    continue
                ours_here = theirs.get(name, [])
                kept = [e for e in lst if e not in ours_here and not is_ours(e)]
                if len(kept) == len(lst):
                    continue
                have[name] = kept
                if not kept and (name in new_lists or not isinstance(rec, dict)):
                    del have[name]  # a list install made, or (no record) one ours emptied
            if not have and (rec is None or rec.get("created")):
                del out[key]
        elif rule is Rule.LIST and isinstance(have, list):
            theirs = rec.get("added", []) if isinstance(rec, dict) else value
            out[key] = [item for item in have if item not in theirs]
            if not out[key] and (rec is None or rec.get("created")):
                del out[key]
        elif rule is Rule.KEYS and isinstance(have, dict):
            previous = rec.get("previous", {}) if isinstance(rec, dict) else None
            for sub, sub_value in value.items():
                if have.get(sub) != sub_value:
                    continue  # changed since install: the user's now
                prev = None if previous is None else previous.get(sub)
                if previous is not None and prev is None:
                    continue  # the user had this very value before install
                if isinstance(prev, dict) and "was" in prev:
                    have[sub] = prev["was"]
                else:
                    del have[sub]
            if not have and (rec is None or rec.get("created")):
                del out[key]
        elif rule is Rule.VALUE and have == value:
            prev = rec.get("previous") if isinstance(rec, dict) else ABSENT
            if isinstance(prev, dict) and "was" in prev:
                out[key] = prev["was"]
            elif prev is not None:
                del out[key]
    return out


def changes(record: dict[str, Any]) -> list[str]:
    """What a merge changed, one sentence each (from :func:`merge`'s record)."""
    out: list[str] = []
    for key, rec in record.items():
        kind = rec.get("kind")
        if kind == "lists" and rec.get("replaced"):
            out.append(f"ctxrelay's earlier {key} replaced for {', '.join(rec['replaced'])}")
        if kind == "lists" and rec.get("added"):
            if key == "hooks":
                out.append(f"hooks added for {', '.join(rec['added'])}")
            else:
                for sub, items in rec["added"].items():
                    out.append(f"{key}.{sub}: added {', '.join(map(str, items))}")
        elif kind == "list" and rec.get("added"):
            out.append(f"{key}: added {', '.join(map(str, rec['added']))}")
        elif kind == "keys":
            for sub, prev in rec.get("previous", {}).items():
                was = f" (it was {prev['was']!r})" if "was" in prev else ""
                out.append(f"{key} {sub} set{was}")
        elif kind == "value" and rec.get("previous") is not None:
            prev = rec["previous"]
            if "was" in prev:
                was = prev["was"]
                what = was.get("command") if isinstance(was, dict) else None
                shown = f" {what}" if isinstance(what, str) else ""
                out.append(f"{key} replaced (yours was{shown}; uninstall restores it)")
            else:
                out.append(f"{key} set")
    return out
