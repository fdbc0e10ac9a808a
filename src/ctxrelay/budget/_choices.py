"""String enumerations for the policy core, without ``enum``.

``ctxrelay analyze --json`` is measured whole process against a native binary, and the
analyzer's replay imports the policy core. ``import enum`` (with the ``functools``,
``collections`` and ``operator`` it pulls in) costs about 10 ms on the project's 2-core
reference machine, a fifth of that whole budget, for four classes of string constants.
:class:`StrEnum` gives them what ``enum.StrEnum`` gives a user, from a metaclass written
once here: members are ``str`` instances equal to and hashing as their value, with
``name`` and ``value``; ``str()``, ``format()`` and JSON give the value and ``repr()`` is
``enum``'s; ``Cls(value)`` and ``Cls[name]`` return the one member (or raise ``enum``'s
errors); iteration, ``len()``, ``__members__`` and aliases follow definition order;
``value in Cls`` follows the running Python's ``enum`` (a ``TypeError`` with a
``DeprecationWarning`` on 3.11, a plain answer from 3.12); members stay the same object
through ``copy``, ``deepcopy`` and ``pickle`` and cannot be reassigned, deleted or
extended. ``auto()``, ``_missing_``, the functional API and flags are not offered.

For type checkers it *is* ``enum.StrEnum`` (imported under ``TYPE_CHECKING``), so mypy
checks members, exhaustiveness and ``Literal`` narrowing exactly as before.
``tests/budget/test_choices.py`` holds it to ``enum.StrEnum``'s behaviour side by side.
"""

from __future__ import annotations

TYPE_CHECKING = False  # annotations only; mypy reads any constant named TYPE_CHECKING as true
__all__ = ["StrEnum"]

if TYPE_CHECKING:
    from enum import StrEnum
else:
    _set = object.__setattr__
    _proxy = type(type.__dict__)  # types.MappingProxyType, without importing types
    # 3.12 made ``value in Cls`` answer for values too (PEP 695 came in the same release,
    # and with it ``__type_params__`` on every class): ``sys`` is not the core's to import.
    _VALUES_ARE_CONTAINED = hasattr(type, "__type_params__")

    _CLASS_DIR = ("__class__", "__contains__", "__doc__", "__getitem__", "__iter__", "__len__")
    _CLASS_DIR += ("__members__", "__module__", "__name__", "__qualname__")

    def _is_enum_member(value):
        """Whether ``value`` is a member of this module's or ``enum``'s enumerations."""
        if isinstance(value, StrEnum):
            return True
        return any(k.__qualname__ == "Enum" and k.__module__ == "enum" for k in type(value).__mro__)

    class EnumType(type):
        """The metaclass of :class:`StrEnum` (named as ``enum``'s, whose messages name it)."""

        def __new__(mcls, name, bases, namespace, **kwargs):
            for base in bases:
                if isinstance(base, EnumType) and base._member_names_:
                    raise TypeError(f"<enum {name!r}> cannot extend {base!r}")
            members = {}
            private = f"_{name}__"
            for key, value in namespace.items():
                if (
                    (key[:1] == "_" and key[-1:] == "_")  # __dunder__ and _sunder_ names
                    or key.startswith(private)
                    or hasattr(type(value), "__get__")  # methods, properties and the like
                ):
                    continue
                if not isinstance(value, str):
                    raise TypeError(f"{value!r} is not a string")
                members[key] = str(value)
            body = {k: v for k, v in namespace.items() if k not in members}
            cls = super().__new__(mcls, name, bases, body, **kwargs)
            member_map = {}
            by_value = {}
            names = []
            for key, value in members.items():
                member = by_value.get(value)
                if member is None:  # a new value; a repeated one is an alias of the first
                    member = str.__new__(cls, value)
                    member.__dict__.update(_value_=value, _name_=key, value=value, name=key)
                    by_value[value] = member
                    names.append(key)
                member_map[key] = member
                type.__setattr__(cls, key, member)
            type.__setattr__(cls, "_member_map_", member_map)
            type.__setattr__(cls, "_value2member_map_", by_value)
            type.__setattr__(cls, "_member_names_", names)
            type.__setattr__(cls, "_members", tuple(member_map[n] for n in names))
            return cls

        def __call__(cls, value):
            try:
                return cls._value2member_map_[value]
            except (KeyError, TypeError):  # not a value, or unhashable
                pass
            if not cls._member_names_:
                raise TypeError(f"{cls!r} has no members defined")
            raise ValueError(f"{value!r} is not a valid {cls.__qualname__}")

        def __getitem__(cls, name):
            return cls._member_map_[name]

        def __iter__(cls):
            return iter(cls._members)

        def __reversed__(cls):
            return reversed(cls._members)

        def __len__(cls):
            return len(cls._members)

        def __bool__(cls):
            return True

        def __contains__(cls, value):
            if isinstance(value, cls):
                return value._name_ in cls._member_map_
            if _VALUES_ARE_CONTAINED:
                try:
                    return value in cls._value2member_map_
                except TypeError:  # unhashable: no member has it as its value
                    return False
            if _is_enum_member(value):
                return False
            import warnings

            warnings.warn(
                "in 3.12 __contains__ will no longer raise TypeError, but will return True"
                " or\nFalse depending on whether the value is a member or the value of a"
                " member",
                DeprecationWarning,
                stacklevel=2,
            )
            raise TypeError(
                "unsupported operand type(s) for 'in': "
                f"{type(value).__qualname__!r} and {type(cls).__qualname__!r}"
            )

        @property
        def __members__(cls):
            return _proxy(cls._member_map_)

        def __setattr__(cls, name, value):
            if name in cls.__dict__.get("_member_map_", ()):
                raise AttributeError(f"cannot reassign member {name!r}")
            super().__setattr__(name, value)

        def __delattr__(cls, name):
            if name in cls.__dict__.get("_member_map_", ()):
                raise AttributeError(f"{cls.__name__!r} cannot delete member {name!r}.")
            super().__delattr__(name)

        def __repr__(cls):
            return f"<enum {cls.__name__!r}>"

        def __dir__(cls):
            return sorted({*dir(str), *_CLASS_DIR, *cls._member_names_})

    class StrEnum(str, metaclass=EnumType):
        """Enumerated string constants, as ``enum.StrEnum`` (see the module's docstring)."""

        def __repr__(self):
            return f"<{type(self).__name__}.{self._name_}: {self._value_!r}>"

        __str__ = str.__str__
        __format__ = str.__format__

        def __setattr__(self, name, value):
            if name in ("name", "value"):
                raise AttributeError(f"<enum 'Enum'> cannot set attribute {name!r}")
            _set(self, name, value)

        def __delattr__(self, name):
            if name in ("name", "value"):
                raise AttributeError(f"<enum 'Enum'> cannot delete attribute {name!r}")
            object.__delattr__(self, name)

        def __reduce_ex__(self, protocol):
            return type(self), (self._value_,)

        def __copy__(self):
            return self

        def __deepcopy__(self, memo):
            return self
