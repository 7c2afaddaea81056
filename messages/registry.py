"""The registry of message types: one name per class, used by the codec's type tag."""

from __future__ import annotations

import enum
from typing import Any, TypeVar

import attrs

T = TypeVar("T")

_TYPES: dict[str, type] = {}
_ENUMS: dict[str, type[enum.Enum]] = {}


def message(cls: type[T]) -> type[T]:
    """Make ``cls`` a frozen, slotted attrs value and register it for the codec.

    Class names are the wire names, so two message classes may not share one.
    """
    if not attrs.has(cls):
        cls = attrs.frozen(cls)  # frozen() implies slots=True
    name = cls.__name__
    if name in _TYPES and _TYPES[name] is not cls:
        raise TypeError(f"message type name {name!r} is registered twice")
    _TYPES[name] = cls
    return cls


def wire_enum(cls: type[T]) -> type[T]:
    """Register an Enum so the codec can carry it by name."""
    assert issubclass(cls, enum.Enum)  # type: ignore[arg-type]
    _ENUMS[cls.__name__] = cls  # type: ignore[assignment]
    return cls


def registered_types() -> dict[str, type]:
    """Name → class for every registered message type (a copy)."""
    return dict(_TYPES)


def lookup_type(name: str) -> type | None:
    return _TYPES.get(name)


def lookup_enum(name: str) -> type[enum.Enum] | None:
    return _ENUMS.get(name)


def type_name(value: Any) -> str:
    return type(value).__name__
