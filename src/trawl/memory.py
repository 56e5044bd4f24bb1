"""Bounds on a crawl process's memory: the budgets of what it holds (``MemoryLimits``,
a crawl setting), and the native heap under them (glibc's malloc).

Each holder gets its bound from ``MemoryLimits`` in one place (``wire.py`` builds the
components with it; docs/architecture.md "Memory" lists them): page bodies and parse
results between fetch and apply, the index writer's heap and its mapped segments,
SQLite's page cache, the lexicon's words.

glibc gives each thread that allocates while another holds the main heap an arena of
its own (up to 8 per core), and memory freed in an arena stays in it. A crawl process
has a dozen threads that allocate (tantivy's indexing, merge and segment threads; the
event loop's executor; the parse pool's manager): measured, their arenas held 15 to 60
MB each, some 370 MB in all at 10,000 pages, most of it free. ``MALLOC_ARENAS`` arenas
instead: the threads share them, and what one frees another reuses. glibc's mmap
threshold rises with every large block freed (up to 32 MiB), after which page bodies
and tantivy's 1 MiB arena pages come from the heap and leave holes in it when freed:
``MMAP_THRESHOLD`` fixed keeps blocks from 512 KiB up in mappings of their own, given
back when freed (measured at 30,000 pages: 70 MB less). Not from 256 KiB: ISA-L's
deflate state at level 2 (some 300 KB, one per gzip member, three members a page) then
got a fresh mapping each time, 23 us of page faults a member against 3 from the heap.
Fixing the threshold also fixes glibc's trim threshold (128 KiB): ``TRIM_THRESHOLD``
keeps a freed block of that size at the heap's top for the next one. What Python frees
below the mmap threshold stays in glibc's free lists, resident: ``Trimmer`` gives it
back every ``MemoryLimits.trim`` seconds from a thread of its own (``malloc_trim``: some
1.5 ms in a crawl of 200 MB).

numpy's OpenBLAS starts a thread for every core but one when numpy is imported, and
each spins some 0.13 s of CPU at its start (``import numpy`` measured at 0.23 CPU-s,
0.10 with one thread, on 2 cores). trawl multiplies no matrices, so
``one_blas_thread`` asks for none: on 64 cores that would be 63 threads and some 8 CPU-s
in each process (not measured here).
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from trawl.errors import ConfigError
from trawl.ticker import Ticker

__all__ = [
    "FETCH_RESERVE",
    "IDLE_CONNECTIONS",
    "MALLOC_ARENAS",
    "MMAP_THRESHOLD",
    "TRIM_EVERY",
    "TRIM_THRESHOLD",
    "WORKER_MMAP_THRESHOLD",
    "MemoryLimits",
    "PageBytes",
    "Share",
    "Trimmer",
    "limit_arenas",
    "one_blas_thread",
    "trim",
]

_MIB = 1024 * 1024
MALLOC_ARENAS = 2  # glibc malloc arenas of a crawl process (the main heap and one more)
MMAP_THRESHOLD = 512 * 1024  # blocks this large and larger: a mapping of their own
TRIM_THRESHOLD = 1024 * 1024  # free memory at the heap's top given back past this
# A parse worker holds one page at a time: its blocks stay in its heap (glibc's own
# ceiling), where a mapping a block cost it up to a third more CPU (mmap, munmap and
# the page faults of a DOM's every large block, page after page).
WORKER_MMAP_THRESHOLD = 32 * 1024 * 1024
IDLE_CONNECTIONS = 256
TRIM_EVERY = 0.5  # seconds between two trims of the heap by a running crawl (1.5 ms each)
# What a fetch under way holds before its reader takes the body: the body as it
# arrives, buffered by aiohttp up to 2 x 64 KiB a connection while the event loop is
# busy elsewhere, and the response's and connection's objects. Measured: 512 fetches
# under way rather than 200 cost 25 to 30 MB more (a web of 40 KB pages).
FETCH_RESERVE = 64 * 1024
_M_TRIM_THRESHOLD = -1  # mallopt's parameters (malloc.h)
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
_TANTIVY_LEAST_HEAP = 15 * _MIB  # tantivy refuses less indexing heap per thread


@dataclass(frozen=True, slots=True)
class MemoryLimits:
    """What a crawl process may hold, by holder (the ``[crawl.memory]`` table)."""

    # Page bodies being read and waiting for a parse worker, and their parse results
    # (text, links) until applied: no fetch starts while they hold this much. Parsing
    # that falls behind for a moment must not stop fetching (a host's turn not taken is
    # lost), so a few bursts of pages: 16 MiB is 400 pages of 40 KB.
    pages: int = 16 * _MIB
    # tantivy's indexing heap of the crawl's index writer (a split index shares it):
    # filled to one batch's postings (500 pages of 40 KB of text: some 15 MB), and a
    # segment written out when full. Where segments end orders equal scores: a smaller
    # heap changes the order of tied hits of an index rebuilt by ``trawl index``.
    index_heap: int = 64 * _MIB
    # Text records (as stored: gzip) an index batch takes at most. Documents wait in
    # tantivy's queue while its thread indexes those before them, and the postings it
    # builds grow with the batch (measured: some 5 bytes of memory a byte of text, so
    # a 500-page batch of 42 KB texts held 100 MB). Batches made by time are smaller
    # (2 s of pages); this bounds a backlog's (a restart, the crawl's last batches, a
    # rebuild by ``trawl index``) to the same.
    index_batch: int = 4 * _MIB
    # The index's segment files mapped by the writer (tantivy's merges read them
    # through their mappings): resident pages past this are paged out. 8 MiB rather
    # than 16 took 10 MB off the crawl's peak at 10,000 pages, at no CPU measured.
    index_mapped: int = 8 * _MIB
    # Documents an index volume holds before the next is begun (``index/layout.py``;
    # 0: one volume, however large). tantivy merges segments within a volume only,
    # and a merge holds memory that grows with the segments it merges: one index of
    # 42 KB texts peaked at 105 MB of anonymous memory while indexing up to 100,000
    # documents and 154 MB when its merges reached some 120,000. The default keeps its
    # merges below the size tantivy's merge policy would next reach (eight segments of
    # some 15,000 documents), so they stay the size they were at 10,000 pages.
    index_volume: int = 64_000
    # SQLite's page cache of the crawl database's connection.
    db_cache: int = 16 * _MIB
    # Parsed robots.txt rules held (``fetch/robots_cache.py``: some 2 KB a small
    # robots.txt, 8 bytes a byte of a large one); the least recently used beyond are
    # parsed again from the store when next wanted. 16 MiB holds some 8,000 small ones
    # (a crawl of 4,000 hosts asks each in turn: a smaller cache would parse them again
    # and again).
    robots: int = 16 * _MIB
    # Words held by the index's lexicon (typo correction; some 80 bytes a word).
    lexicon_words: int = 250_000
    # Recently parsed URLs whose pages URL equivalences are learned from (some 370
    # bytes a URL: the URL, its page, its spellings); the least recently seen hosts'
    # are forgotten first.
    equivalence_urls: int = 20_000
    # HTTP connections kept open for reuse while idle (the least recently used beyond
    # this are closed: ``fetch/_http_pool.py``). Each holds a socket and some 8 KB; a
    # crawl keeps one per host contacted within the keep-alive time otherwise (4,003
    # sockets on 4,000 hosts; bounded, the crawl process held 30 MB less).
    idle_connections: int = IDLE_CONNECTIONS
    # Hosts with queued work the SQLite frontier holds in memory, in its schedule (some
    # 400 bytes each: the host record, its schedule entry, its name; hosts in flight
    # come on top, as many as the fetches under way). Others with queued work wait on
    # disk, in order, and come in as hosts leave; a host that has had 100 fetches in a
    # row while others waited goes back to wait (``storage/sqlite/frontier_state.py``),
    # so none waits forever. Links name hosts without end (held in memory, a million
    # took 550 MB); 50,000 ready hosts keep any crawl's fetches busy, even at a host's
    # delay of several seconds.
    frontier_hosts: int = 50_000
    # Tags of a page a parse worker builds a tree of (0: all); the rest of the page is
    # not parsed (``parse:tags over cap``). Lexbor's tree takes some 320 bytes a tag:
    # the 10 MiB a body may be (783,000 tags of links) took a parse worker to 400 MB.
    # Real pages hold 150 to 3,300 tags (bench/bench_extract.py), big ones tens of
    # thousands: 100,000 tags, some 32 MB of tree.
    parse_tags: int = 100_000
    # Seconds between two trims of the malloc heap (what Python freed, given back).
    trim: float = TRIM_EVERY

    def __post_init__(self) -> None:
        counts = (self.pages, self.index_batch, self.index_mapped, self.db_cache, self.robots)
        if min(*counts, self.lexicon_words, self.equivalence_urls, self.frontier_hosts) <= 0:
            raise ConfigError("memory limits must be positive")
        if self.idle_connections < 0:
            raise ConfigError("memory.idle_connections must be 0 or more")
        if self.index_volume < 0 or self.parse_tags < 0:
            raise ConfigError("memory.index_volume and memory.parse_tags must be 0 or more")
        if self.index_heap < _TANTIVY_LEAST_HEAP:
            raise ConfigError(f"memory.index_heap must be at least {_TANTIVY_LEAST_HEAP} bytes")
        if self.trim <= 0:
            raise ConfigError("memory.trim must be a positive number of seconds")


class PageBytes:
    """The bytes of pages a crawl process holds between the network and the store:
    each fetch under way (``reserve``: what it holds before its body is counted), the
    bodies being read (the HTTP client counts each chunk as its reader takes it),
    bodies waiting for a parse worker and parse results waiting to be applied (the
    parse role). No fetch starts while they are ``limit`` or more (``full``); a fetch
    under way reads on, up to its body cap. One event loop adds and takes: no lock."""

    __slots__ = ("held", "limit", "reserve")

    def __init__(self, limit: int, *, reserve: int = FETCH_RESERVE) -> None:
        self.limit = limit
        self.reserve = reserve
        self.held = 0

    def add(self, n: int) -> None:
        """``n`` bytes more held (negative: given back)."""
        self.held += n

    def charge(self, n: int) -> int:
        """What a page of ``n`` bytes counts: at most half the limit, so that one page
        larger than that (a body up to ``max_body_bytes``, 10 MiB) never stops fetching
        on its own while it is read, parsed and admitted; two such pages do."""
        return min(n, self.limit // 2)

    @property
    def full(self) -> bool:
        return self.held >= self.limit

    def share(self) -> Share:
        """One page's part of what is held: 0 bytes until ``set``."""
        return Share(self)


class Share:
    """What one page counts in its ``PageBytes``: ``set`` to its size as it changes
    (charged at most half the limit), ``set(0)`` when it is let go."""

    __slots__ = ("_bytes", "n")

    def __init__(self, pages: PageBytes) -> None:
        self._bytes = pages
        self.n = 0

    def set(self, size: int) -> None:
        n = self._bytes.charge(size)
        self._bytes.held += n - self.n
        self.n = n


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


def limit_arenas(
    arenas: int = MALLOC_ARENAS,
    mmap_threshold: int = MMAP_THRESHOLD,
    trim_threshold: int = TRIM_THRESHOLD,
) -> bool:
    """Cap glibc's malloc arenas for this process and fix its mmap and trim thresholds
    (before its threads start: an arena made is never unmade). False where there is no
    glibc."""
    libc = _libc()
    if libc is None:
        return False
    # Each asked whatever another answered: a threshold is worth having on its own.
    asked = (
        (_M_ARENA_MAX, arenas),
        (_M_MMAP_THRESHOLD, mmap_threshold),
        (_M_TRIM_THRESHOLD, trim_threshold),
    )
    took = [libc.mallopt(param, value) == 1 for param, value in asked]
    return all(took)


def one_blas_thread() -> bool:
    """Ask numpy's BLAS for no threads of its own (``OPENBLAS_NUM_THREADS``), unless
    the user set it; before numpy is imported, or nothing changes (False)."""
    if "numpy" in sys.modules:
        return False
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    return True


def trim() -> bool:
    """Give free memory at the top of every arena, and free pages inside them, back to
    the system (glibc's ``malloc_trim(0)``). True if some was given back."""
    libc = _libc()
    return bool(libc is not None and libc.malloc_trim(0) == 1)


class Trimmer:
    """Gives freed heap back to the system (``trim_heap``) every ``every`` seconds, in a
    thread of its own from ``start`` to ``stop``: through the whole crawl, its shutdown
    included, whose last index batches and merges run after the group commits have
    stopped (the crawl process's peak came there, untrimmed). ``malloc_trim`` lets go
    of the GIL (a ctypes call), so the loop does not wait on it."""

    def __init__(
        self,
        *,
        every: float = TRIM_EVERY,
        trim_heap: Callable[[], bool] = trim,
        wait: Callable[[float], bool] | None = None,
    ) -> None:
        self._trim = trim_heap
        self._ticker = Ticker(self._once, every, name="trawl-trim", wait=wait)
        self.trims = 0
        self.cpu = 0.0  # CPU seconds the trims took

    def start(self) -> None:
        self._ticker.start()

    def stop(self) -> None:
        """No more trims; returns once the thread has ended (at most one trim's wait)."""
        self._ticker.stop()

    def _once(self) -> bool:
        started = time.thread_time()
        self._trim()
        self.cpu += time.thread_time() - started
        self.trims += 1
        return True
