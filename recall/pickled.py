"""Fast pickling for the slots dataclasses the read-ahead worker sends in bulk (adr/0045).

A ``dataclass(slots=True)`` pickles through the ``__getstate__``/``__setstate__`` that dataclasses
adds, which looks the fields up again for every object. The read-ahead worker sends about five
such objects per message (the message, its tool calls, its cleaned row, what it touched), and the
importing process unpickles them: measured on 20,000 generated Claude Code messages, that generic
path was about a third of the round trip's time. Pickled as a call of the class on its fields,
an object round-trips the same and costs a tuple.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T", bound=type)


def pickled_as_call(cls: T) -> T:
    """Pickle instances of dataclass ``cls`` as ``cls(*fields)``; every field must be an init field."""
    fields = dataclasses.fields(cls)
    if any(not field.init for field in fields):
        raise TypeError(f"{cls.__name__} has fields __init__ does not take")
    names = tuple(field.name for field in fields)

    def __reduce__(self: Any) -> tuple[type, tuple[Any, ...]]:
        return cls, tuple(getattr(self, name) for name in names)

    cls.__reduce__ = __reduce__  # type: ignore[assignment]
    return cls
