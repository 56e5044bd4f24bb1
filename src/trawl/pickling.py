"""Dataclasses pickled as their fields' values, not as dataclass state.

Every page crosses to a parse worker and back as pickles (``parse/pool.py``): the job,
the crawl's parse options (and their ``MinHasher``), the result and what it holds. A slots
dataclass pickles through ``dataclasses``' own ``__getstate__``/``__setstate__``,
which call ``fields()`` and loop in Python on both sides: 13 us a round trip for a
``PageInput`` or a ``ParseOptions``, 6 with ``by_fields`` (measured, a 48 KB body).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import fields
from typing import Any, TypeVar

__all__ = ["by_fields"]

T = TypeVar("T")


def by_fields(cls: type[T]) -> type[T]:
    """Make a dataclass pickle as ``cls(*values)``: every field must be an ``__init__``
    argument, in order (a ``__post_init__`` runs again when unpickled)."""
    declared = fields(cls)  # type: ignore[arg-type]
    names = [f.name for f in declared]
    if any(not f.init for f in declared):
        raise TypeError(f"{cls.__name__}: a field outside __init__ cannot be pickled so")
    values: Callable[[Any], tuple[Any, ...]]
    if len(names) == 1:
        get_one = operator.attrgetter(names[0])
        values = lambda obj: (get_one(obj),)  # noqa: E731
    else:
        values = operator.attrgetter(*names)

    def reduce(self: T) -> tuple[type[T], tuple[Any, ...]]:
        return cls, values(self)

    cls.__reduce__ = reduce  # type: ignore[method-assign,assignment]
    return cls
