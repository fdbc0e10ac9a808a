"""Frozen value classes for the modules ``ctxrelay analyze --json`` imports, without
``dataclasses``.

``ctxrelay analyze --json`` is measured whole process against a native binary. On the
project's 2-core reference machine ``import dataclasses`` costs 20-30 ms (it imports
``inspect``) and every ``@dataclass`` class about 1.3 ms more (it compiles each method
from source), so the analyzer's fifteen value classes cost more than reading 10 MB of
transcripts. :func:`frozen` gives a class what the project uses of a frozen, slotted
dataclass (an ``__init__`` of its fields in order with their defaults, ``__eq__``,
``__hash__``, ``__repr__``, ``__match_args__``, immutability, :func:`replace`,
:func:`fields`, :func:`as_dict`) from functions written once here, so a class costs a
few microseconds. Their ``__init__`` binds the arguments in Python, about twice the time
of a generated one; a class built by the thousand writes its own ``__init__`` (setting
every field with ``object.__setattr__``), which :func:`frozen` keeps, and
``tests/test_frozen.py`` checks that each such ``__init__`` takes the fields in order.
For type checkers it is a ``dataclass_transform``: mypy checks its classes as
dataclasses. ``tests/test_frozen.py`` holds it to ``dataclasses``' behaviour.
"""

from __future__ import annotations

TYPE_CHECKING = False  # annotations only; mypy reads any constant named TYPE_CHECKING as true
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, dataclass_transform

    T = TypeVar("T")

__all__ = ["FrozenError", "as_dict", "field", "fields", "frozen", "replace"]

_MISSING: Any = object()
_NOT_FIELDS = ("ClassVar", "typing.ClassVar", "Final", "typing.Final")
_set = object.__setattr__


class FrozenError(AttributeError):
    """An attribute of a frozen value was assigned or deleted."""


class _Field:
    __slots__ = ("compare", "default", "factory", "hash", "init", "repr")

    def __init__(
        self,
        *,
        default: Any,
        factory: Callable[[], Any] | None,
        init: bool,
        repr: bool,
        compare: bool,
        hash: bool | None,
    ) -> None:
        self.default = default
        self.factory = factory
        self.init = init
        self.repr = repr
        self.compare = compare
        self.hash = compare if hash is None else hash


def field(
    *,
    default: Any = _MISSING,
    default_factory: Callable[[], Any] | None = None,
    init: bool = True,
    repr: bool = True,
    compare: bool = True,
    hash: bool | None = None,
) -> Any:
    """A field with options, as ``dataclasses.field`` (``compare=False`` leaves it out of
    equality and hashing, ``hash=False`` out of hashing only; ``init=False`` is set by
    ``__post_init__``)."""
    return _Field(
        default=default,
        factory=default_factory,
        init=init,
        repr=repr,
        compare=compare,
        hash=hash,
    )


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise FrozenError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")


def _frozen_delattr(self: object, name: str) -> None:
    raise FrozenError(f"cannot delete field {name!r} of a frozen {type(self).__name__}")


def _build(cls: type) -> type:
    names: list[str] = []
    specs: dict[str, _Field] = {}
    for klass in reversed(cls.__mro__[:-1]):  # inherited fields first, as dataclasses
        # not inspect.get_annotations: inspect is the import this module avoids
        for name, note in klass.__dict__.get("__annotations__", {}).items():  # noqa: RUF063
            if name in specs or str(note).startswith(_NOT_FIELDS):
                continue
            value = klass.__dict__.get(name, _MISSING)
            spec = (
                value
                if isinstance(value, _Field)
                else _Field(
                    default=value, factory=None, init=True, repr=True, compare=True, hash=None
                )
            )
            names.append(name)
            specs[name] = spec
    init_names = tuple(n for n in names if specs[n].init)
    defaults = {
        n: specs[n] for n in init_names if specs[n].default is not _MISSING or specs[n].factory
    }
    derived: tuple[tuple[str, Callable[[], Any]], ...] = tuple(
        (n, f) for n in names if not specs[n].init and (f := specs[n].factory) is not None
    )
    compared = tuple(n for n in names if specs[n].compare)
    hashed = tuple(n for n in names if specs[n].hash)
    shown = tuple(n for n in names if specs[n].repr)
    post_init = getattr(cls, "__post_init__", None)
    count = len(init_names)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) == count and not kwargs:  # the common call: every field, in order
            for name, value in zip(init_names, args, strict=True):
                _set(self, name, value)
        else:
            if len(args) > count:
                raise TypeError(f"{cls.__name__}() takes {count} positional arguments")
            given = dict(zip(init_names, args, strict=False))
            for name, value in kwargs.items():
                if name not in specs or not specs[name].init:
                    raise TypeError(f"{cls.__name__}() got an unexpected keyword {name!r}")
                if name in given:
                    raise TypeError(f"{cls.__name__}() got multiple values for {name!r}")
                given[name] = value
            for name in init_names:
                if name in given:
                    value = given[name]
                else:
                    spec = defaults.get(name)
                    if spec is None:
                        raise TypeError(f"{cls.__name__}() missing argument {name!r}")
                    value = spec.factory() if spec.factory is not None else spec.default
                _set(self, name, value)
        for name, factory in derived:
            _set(self, name, factory())
        if post_init is not None:
            post_init(self)

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return tuple(getattr(self, n) for n in compared) == tuple(
            getattr(other, n) for n in compared
        )

    def __hash__(self: Any) -> int:
        return hash(tuple(getattr(self, n) for n in hashed))

    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in shown)
        return f"{type(self).__qualname__}({inner})"

    def __getstate__(self: Any) -> tuple[Any, ...]:
        return tuple(getattr(self, n) for n in names)

    def __setstate__(self: Any, state: tuple[Any, ...]) -> None:
        for name, value in zip(names, state, strict=True):
            _set(self, name, value)

    namespace = {k: v for k, v in cls.__dict__.items() if k not in specs}
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    # What the class writes itself wins, as with dataclasses (``__init__`` included:
    # the few classes built by the thousand write theirs out).
    for key, method in (
        ("__init__", __init__),
        ("__eq__", __eq__),
        ("__hash__", __hash__),
        ("__repr__", __repr__),
    ):
        namespace.setdefault(key, method)
    namespace.update(
        __slots__=tuple(n for n in names if n not in _slots_of(cls.__mro__[1:])),
        __getstate__=__getstate__,
        __setstate__=__setstate__,
        __setattr__=_frozen_setattr,
        __delattr__=_frozen_delattr,
        __match_args__=init_names,
        _frozen_fields=tuple(names),
    )
    if "__doc__" not in namespace:
        namespace["__doc__"] = None
    built = type(cls)(cls.__name__, cls.__bases__, namespace)
    built.__qualname__ = cls.__qualname__
    return built


def _slots_of(classes: tuple[type, ...]) -> set[str]:
    found: set[str] = set()
    for klass in classes:
        slots = klass.__dict__.get("__slots__", ())
        found.update((slots,) if isinstance(slots, str) else slots)
    return found


if TYPE_CHECKING:

    @dataclass_transform(frozen_default=True, field_specifiers=(field,))
    def frozen(cls: type[T]) -> type[T]: ...

else:

    def frozen(cls):
        """Make ``cls`` a frozen, slotted value class of its annotated fields."""
        return _build(cls)


def fields(value: object) -> tuple[str, ...]:
    """The field names of a :func:`frozen` class or instance, in order."""
    names: tuple[str, ...] = getattr(value, "_frozen_fields")  # noqa: B009 - set by frozen
    return names


def replace(value: T, **changes: Any) -> T:
    """A copy of ``value`` with ``changes``, built through ``__init__`` (so
    ``__post_init__`` runs and derived fields are derived again)."""
    cls = type(value)
    init = cls.__match_args__  # type: ignore[attr-defined]
    for name in changes:
        if name not in init:
            raise TypeError(f"{cls.__name__} has no init field {name!r}")
    return cls(*(changes[n] if n in changes else getattr(value, n) for n in init))


def as_dict(value: object) -> dict[str, Any]:
    """``dataclasses.asdict``: the fields of a :func:`frozen` value as a dict, nested
    values (in lists, tuples and dicts too) as dicts of their own."""
    return {name: _plain(getattr(value, name)) for name in fields(value)}


def _plain(value: Any) -> Any:
    if hasattr(type(value), "_frozen_fields"):
        return as_dict(value)
    if isinstance(value, list | tuple):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    return value
