"""``ctxrelay._frozen`` behaves as a frozen, slotted dataclass where the project uses one."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys

import pytest

from ctxrelay._frozen import FrozenError, as_dict, field, fields, frozen, replace


@frozen
class Point:
    """A doc."""

    x: int
    y: int = 0
    tags: tuple[str, ...] = ()
    note: str = field(default="", compare=False, repr=False)

    @property
    def total(self) -> int:
        return self.x + self.y


@dataclasses.dataclass(frozen=True, slots=True)
class Twin:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()
    note: str = dataclasses.field(default="", compare=False, repr=False)


@frozen
class Derived:
    size: int
    items: dict[str, int] = field(default_factory=dict, hash=False)
    double: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "double", self.size * 2)


def test_construction_equality_hash_and_repr_match_a_dataclass() -> None:
    calls = [((1,), {}), ((1, 2), {}), ((1,), {"tags": ("a",)}), ((), {"x": 3, "note": "n"})]
    for args, kwargs in calls:
        ours, theirs = Point(*args, **kwargs), Twin(*args, **kwargs)  # type: ignore[arg-type]
        assert [getattr(ours, n) for n in fields(ours)] == [
            getattr(theirs, f.name) for f in dataclasses.fields(theirs)
        ]
        assert repr(ours) == repr(theirs).replace("Twin", "Point")
    assert Point(1, 2) == Point(1, 2, note="other")  # compare=False
    assert Point(1, 2) != Point(2, 1)
    assert hash(Point(1, 2)) == hash(Point(1, 2, note="x"))
    assert Point(1) != Twin(1)  # type: ignore[comparison-overlap]
    assert Point(1, 2).total == 3
    assert Point.__doc__ == "A doc."
    assert Point.__match_args__ == Twin.__match_args__
    match Point(4, 5):
        case Point(x, y):
            assert (x, y) == (4, 5)


def test_wrong_calls_raise_type_error_as_a_dataclass_does() -> None:
    for args, kwargs in [((), {}), ((1, 2, (), "", 5), {}), ((1,), {"x": 2}), ((1,), {"z": 1})]:
        with pytest.raises(TypeError):
            Twin(*args, **kwargs)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            Point(*args, **kwargs)  # type: ignore[arg-type]


def test_as_dict_matches_asdict() -> None:
    @frozen
    class Outer:
        inner: Point
        many: tuple[Point, ...] = ()
        by: dict[str, Point] = field(default_factory=dict)

    @dataclasses.dataclass(frozen=True)
    class TwinOuter:
        inner: Twin
        many: tuple[Twin, ...] = ()
        by: dict[str, Twin] = dataclasses.field(default_factory=dict)

    ours = Outer(Point(1, 2), (Point(3),), {"k": Point(4, note="n")})
    theirs = TwinOuter(Twin(1, 2), (Twin(3),), {"k": Twin(4, note="n")})
    assert as_dict(ours) == dataclasses.asdict(theirs)


def test_values_are_immutable_slotted_and_copyable() -> None:
    p = Point(1, 2, ("a",), "n")
    with pytest.raises(FrozenError):
        p.x = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del p.y
    assert not hasattr(p, "__dict__")
    for other in (copy.copy(p), copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert other == p
        assert other.note == "n"


def test_factories_post_init_and_replace() -> None:
    a, b = Derived(2), Derived(2)
    assert a.items == {}
    assert a.items is not b.items
    assert a.double == 4
    c = replace(a, size=5)
    assert (c.size, c.double) == (5, 10)  # derived again
    assert replace(Point(1, 2), y=7) == Point(1, 7)
    with pytest.raises(TypeError):
        replace(a, double=1)
    assert repr(a) == "Derived(size=2, items={})"
    assert hash(a) == hash(Derived(2, {"k": 1}))  # hash=False: compared, not hashed
    assert a != Derived(2, {"k": 1})


def test_what_a_class_writes_itself_wins() -> None:
    @frozen
    class Named:
        name: str

        def __repr__(self) -> str:
            return f"<{self.name}>"

    assert repr(Named("x")) == "<x>"
    assert Named("x") == Named("x")


def test_importing_it_loads_neither_dataclasses_nor_typing() -> None:
    code = (
        "import sys, ctxrelay._frozen\n"
        "print(sorted(m for m in ('dataclasses', 'typing', 'inspect') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


def test_every_written_out_init_takes_the_fields_in_order() -> None:
    from ctxrelay.analyze._replay import SimRequest
    from ctxrelay.transcripts import Response, Usage

    for cls in (Usage, Response, SimRequest):
        code = cls.__init__.__code__
        params = code.co_varnames[1 : code.co_argcount]
        assert params == cls.__match_args__ == fields(cls), cls
        value = cls(*range(len(params)))
        assert [getattr(value, n) for n in params] == list(range(len(params)))
    assert Usage() == Usage(0, 0, 0, 0, 0)
