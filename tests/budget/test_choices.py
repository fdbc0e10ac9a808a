"""The policy core's import-free ``StrEnum`` behaves as ``enum.StrEnum``: the same members
defined both ways give the same answers, side by side."""

from __future__ import annotations

import copy
import enum
import json
import pickle
import sqlite3
import sys
import warnings
from typing import TYPE_CHECKING, Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.pretty import pretty_repr

from ctxrelay.budget import Action, Capability, Stage
from ctxrelay.budget._choices import StrEnum
from ctxrelay.budget.triggers import MainTrigger

if TYPE_CHECKING:
    from collections.abc import Callable

PROJECT_ENUMS = [Action, Capability, Stage, MainTrigger]


def _kind(base: type[enum.StrEnum]) -> Any:
    class Kind(base):  # type: ignore[valid-type,misc]
        """Kinds of things."""

        HANDOFF = "handoff"
        BLOCK = "block"
        ALIAS = "handoff"  # an alias of HANDOFF
        _single = "single"  # one leading underscore: still a member
        __private = "private"  # name-mangled: not a member

        def shout(self) -> str:
            return str(self).upper() + "!"

        @property
        def first(self) -> str:
            return str(self)[0]

    return Kind


def _extend(cls: Any) -> Any:
    class Sub(cls):  # type: ignore[misc]
        OTHER = "other"

    return Sub


class _OtherReal(enum.StrEnum):
    HANDOFF = "handoff"


class _OtherOurs(StrEnum):
    HANDOFF = "handoff"


def _add_an_attribute(cls: Any) -> object:
    cls.NEW = "new"
    return list(cls), cls.NEW


def _other(cls: Any) -> Any:
    """Another enumeration of the same kind as ``cls``, with the same member."""
    return _OtherOurs if isinstance(cls, type(StrEnum)) else _OtherReal


class _Plain(enum.Enum):
    HANDOFF = "handoff"


def _outcome(op: Callable[[Any], object], cls: Any) -> tuple[object, ...]:
    """What ``op(cls)`` gives, raises and warns, in terms both kinds can be compared by."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result: object = op(cls)
        except Exception as error:  # the error is what is compared
            got: tuple[object, ...] = (
                "raises",
                type(error),
                str(error),
                error.__context__ is None,
            )
        else:
            got = ("returns", _plain(result, cls))
    return (*got, [(w.category, str(w.message)) for w in caught])


def _plain(value: object, cls: Any) -> object:
    """Members as their names (and whether they are ``cls``'s), containers element-wise."""
    if isinstance(value, list | tuple):
        return type(value)(_plain(v, cls) for v in value)
    if isinstance(value, enum.Enum | StrEnum):
        return ("member", type(value) is cls, value._name_, type(value._value_))
    if isinstance(value, type):
        return "the class" if value is cls else value
    return (type(value), value)


OPERATIONS: dict[str, Callable[[Any], object]] = {
    "str": lambda c: str(c.HANDOFF),
    "format": lambda c: format(c.HANDOFF),
    "format spec": lambda c: format(c.BLOCK, ">8"),
    "f-string": lambda c: f"<{c.HANDOFF}|{c.BLOCK!s}|{c.BLOCK:^9}>",
    "percent": lambda c: "%s" % c.HANDOFF,  # noqa: UP031 - the old formatting too
    "repr": lambda c: repr(c.HANDOFF),
    "repr of an alias": lambda c: repr(c.ALIAS),
    "repr of the class": repr,
    "value": lambda c: c.HANDOFF.value,
    "name": lambda c: c.HANDOFF.name,
    "sunder value and name": lambda c: (c.BLOCK._value_, c.BLOCK._name_),
    "is a str": lambda c: (isinstance(c.HANDOFF, str), isinstance(c.HANDOFF, c)),
    "equal to its value": lambda c: (c.HANDOFF == "handoff", c.HANDOFF != "handoff"),
    "not equal to another": lambda c: (c.HANDOFF == c.BLOCK, c.HANDOFF == "HANDOFF"),
    "hash of its value": lambda c: hash(c.HANDOFF) == hash("handoff"),
    "dict key": lambda c: ({"handoff": 1}[c.HANDOFF], {c.HANDOFF: 1}["handoff"]),
    "set": lambda c: len({c.HANDOFF, "handoff", c.ALIAS}),
    "ordered as str": lambda c: (sorted(c), c.BLOCK < c.HANDOFF, max(c)),
    "str methods give str": lambda c: [type(c.HANDOFF.upper()), type(c.HANDOFF + "!")],
    "slice and len": lambda c: (c.HANDOFF[:4], len(c.HANDOFF)),
    "methods and properties": lambda c: (c.BLOCK.shout(), c.BLOCK.first),
    "by value": lambda c: c("handoff") is c.HANDOFF,
    "by member": lambda c: c(c.BLOCK) is c.BLOCK,
    "by another enum's member": lambda c: c(_other(c).HANDOFF) is c.HANDOFF,
    "by a name": lambda c: c("HANDOFF"),
    "by a wrong value": lambda c: c("nope"),
    "by an int": lambda c: c(3),
    "by None": lambda c: c(None),
    "by an unhashable": lambda c: c([]),
    "by no value": lambda c: c(),
    "by name": lambda c: c["BLOCK"] is c.BLOCK,
    "by an alias's name": lambda c: c["ALIAS"] is c.HANDOFF,
    "by a wrong name": lambda c: c["nope"],
    "by a value as name": lambda c: c["handoff"],
    "alias is the member": lambda c: c.ALIAS is c.HANDOFF,
    "iter": list,
    "iter again": lambda c: [m.name for m in iter(c)],
    "reversed": lambda c: list(reversed(c)),
    "len": len,
    "bool": bool,
    "members": lambda c: list(c.__members__.items()),
    "members is read-only": lambda c: c.__members__.__setitem__("X", c.HANDOFF),
    "private is not a member": lambda c: c._Kind__private,
    "member in": lambda c: (c.HANDOFF in c, c.ALIAS in c),
    "another enum's member in": lambda c: _other(c).HANDOFF in c,
    "plain enum member in": lambda c: _Plain.HANDOFF in c,
    "value in": lambda c: "handoff" in c,
    "wrong value in": lambda c: "nope" in c,
    "int in": lambda c: 3 in c,
    "unhashable in": lambda c: [] in c,
    "copy": lambda c: copy.copy(c.HANDOFF) is c.HANDOFF,
    "deepcopy": lambda c: copy.deepcopy([c.HANDOFF, {"k": c.BLOCK}])[1]["k"] is c.BLOCK,
    "json": lambda c: json.dumps(c.HANDOFF),
    "json in containers": lambda c: json.dumps({c.HANDOFF: [c.BLOCK, c.ALIAS]}),
    "reduce": lambda c: c.HANDOFF.__reduce_ex__(2)[1],
    "set value": lambda c: setattr(c.HANDOFF, "value", "x"),
    "set name": lambda c: setattr(c.HANDOFF, "name", "x"),
    "reassign a member": lambda c: setattr(c, "HANDOFF", "x"),
    "delete a member": lambda c: delattr(c, "BLOCK"),
    "an attribute added is not a member": _add_an_attribute,
    "extend": _extend,
    "class dir": dir,
    "doc": lambda c: (c.__doc__, c.HANDOFF.__doc__),
    "names": lambda c: (c.__name__, type(c).__name__),
}


@pytest.mark.parametrize("op", list(OPERATIONS.values()), ids=list(OPERATIONS))
def test_our_members_answer_as_enums(op: Callable[[Any], object]) -> None:
    assert _outcome(op, _kind(StrEnum)) == _outcome(op, _kind(enum.StrEnum))


def test_a_plain_str_in_an_enum_follows_the_running_python() -> None:
    # On 3.11 a plain str is neither in nor out: enum warns and raises, and so do we.
    if sys.version_info >= (3, 12):
        assert "handoff" in _kind(StrEnum)
    else:
        with (
            pytest.warns(DeprecationWarning, match="3.12"),
            pytest.raises(TypeError, match="'EnumType'"),
        ):
            _ = "handoff" in _kind(StrEnum)


def test_members_that_are_not_strings_are_refused_as_enum_refuses_them() -> None:
    for make in (StrEnum, enum.StrEnum):
        with pytest.raises(TypeError, match=r"^1 is not a string$"):

            class Bad(make):  # type: ignore[valid-type,misc]
                ONE = 1


@pytest.mark.parametrize("cls", PROJECT_ENUMS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_the_project_members_are_singletons_through_pickle(cls: Any, protocol: int) -> None:
    for member in cls:
        assert pickle.loads(pickle.dumps(member, protocol)) is member
        assert copy.copy(member) is member
        assert copy.deepcopy(member) is member
        assert cls(member.value) is member
        assert cls[member.name] is member


@pytest.mark.parametrize("cls", PROJECT_ENUMS, ids=lambda c: c.__name__)
def test_the_project_enums_are_ours_and_match_their_enum_twins(cls: Any) -> None:
    assert type(cls) is type(StrEnum)
    twin = _REAL_FUNCTIONAL(cls.__name__, [(m.name, m.value) for m in cls])
    assert [(m.name, m.value, str(m), repr(m)) for m in cls] == [
        (m.name, m.value, str(m), repr(m)) for m in twin
    ]


# Untyped handles: mypy would check the functional API's arguments as literals.
_OUR_TYPE: Any = type(StrEnum)
_REAL_FUNCTIONAL: Any = enum.StrEnum


def _lookups(probe: str) -> list[Callable[[Any], object]]:
    def by_value(c: Any) -> object:
        return c(probe)

    def by_name(c: Any) -> object:
        return c[probe]

    def contains(c: Any) -> object:
        return probe in c

    return [by_value, by_name, contains]


NAMES = st.from_regex(r"[A-Z][A-Z0-9_]{0,12}[A-Z0-9]", fullmatch=True)


@settings(max_examples=200, deadline=None)
@given(
    pairs=st.lists(st.tuples(NAMES, st.text(max_size=6)), unique_by=lambda p: p[0], max_size=6),
    probes=st.lists(st.text(max_size=6), max_size=6),
)
def test_any_members_and_lookups_agree(pairs: list[tuple[str, str]], probes: list[str]) -> None:
    ours = _OUR_TYPE("Kind", (StrEnum,), {"__module__": __name__, **dict(pairs)})
    real = _REAL_FUNCTIONAL("Kind", pairs, module=__name__)
    names = [name for name, _ in pairs]
    ops: list[Callable[[Any], object]] = [
        lambda c: [(m.name, m.value, repr(m), str(m)) for m in c],
        lambda c: (len(c), list(c.__members__)),
        lambda c: [getattr(c, n) is c[n] for n in names],
        lambda c: [json.dumps(m) for m in c],
    ]
    for probe in [*probes, *names, *(v for _, v in pairs)]:
        ops += _lookups(probe)
    for op in ops:
        assert _outcome(op, ours) == _outcome(op, real)


def _sqlite_round_trip(value: object) -> object:
    with sqlite3.connect(":memory:") as db:
        row = db.execute("select ?, typeof(?)", (value, value)).fetchone()
    db.close()
    return tuple(row)


def _pydantic_json(value: object) -> object:
    pydantic = pytest.importorskip("pydantic", reason="pydantic comes with the dev extras")
    return pydantic.TypeAdapter(Any).dump_json({"k": [value]})


SERIALISERS: dict[str, Callable[[object], object]] = {
    "orjson": lambda v: orjson.dumps({v: [v]}, option=orjson.OPT_NON_STR_KEYS),
    "rich": lambda v: pretty_repr({"k": [v]}),
    "sqlite": _sqlite_round_trip,
    "pydantic": _pydantic_json,
}


@pytest.mark.parametrize("serialise", list(SERIALISERS.values()), ids=list(SERIALISERS))
def test_the_project_libraries_see_our_members_as_enum_members(
    serialise: Callable[[object], object],
) -> None:
    assert serialise(_kind(StrEnum).HANDOFF) == serialise(_kind(enum.StrEnum).HANDOFF)
