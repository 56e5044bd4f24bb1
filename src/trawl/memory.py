"""Bounds on the native heap of a crawl process (glibc's malloc), beside the bounds
each component keeps on what it holds (see "Memory" in docs/architecture.md).

glibc gives each thread that allocates while another holds the main heap an arena of
its own (up to 8 per core), and memory freed in an arena stays in it. A crawl process
has a dozen threads that allocate (tantivy's indexing, merge and segment threads for
the index and the lexicon; the event loop's executor, which runs the index batch and
the commit's fsyncs; the parse pool's manager): measured, their arenas held 15 to 60
MB each, some 370 MB in all at 10,000 pages, most of it free. ``MALLOC_ARENAS``
arenas instead: the threads share them, and what one frees another reuses. And glibc
keeps what Python frees (page bodies, texts, parse results: blocks over its
small-object size) in its free lists, resident: ``Trimmer`` gives it back every
``TRIM_EVERY`` seconds (``malloc_trim``, some 7 ms for 200 MB), so that fragments of
earlier bursts do not add up as the crawl grows.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from collections.abc import Callable

__all__ = ["MALLOC_ARENAS", "TRIM_EVERY", "Trimmer", "limit_arenas", "trim"]

MALLOC_ARENAS = 2  # glibc malloc arenas of a crawl process (the main heap and one more)
TRIM_EVERY = 10.0  # seconds between two trims of the heap by a running crawl
_M_ARENA_MAX = -8  # mallopt's parameter (malloc.h)


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """The process's C library, looked up once (no ``ctypes.util.find_library``: it
    runs ``ldconfig``, a fork of the crawl process each time)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)  # the symbols the process already has
    except OSError:
        return None
    # musl and other C libraries have no mallopt/malloc_trim: nothing to bound there.
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def limit_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas for this process (before its threads start: an arena
    made is never unmade). False where there is no glibc."""
    libc = _libc()
    return bool(libc is not None and libc.mallopt(_M_ARENA_MAX, arenas) == 1)


def trim() -> bool:
    """Give free memory at the top of every arena, and free pages inside them, back to
    the system (glibc's ``malloc_trim(0)``). True if some was given back."""
    libc = _libc()
    return bool(libc is not None and libc.malloc_trim(0) == 1)


class Trimmer:
    """Calls ``trim`` (the heap's) when ``every`` seconds have passed since the last
    call; asked at each group commit of a crawl."""

    def __init__(
        self,
        now: Callable[[], float],
        *,
        every: float = TRIM_EVERY,
        trim_heap: Callable[[], bool] = trim,
    ) -> None:
        self._now = now
        self._every = every
        self._trim = trim_heap
        self._next = now() + every

    def maybe(self) -> bool:
        """Trim if due; whether it was."""
        now = self._now()
        if now < self._next:
            return False
        self._next = now + self._every
        self._trim()
        return True
