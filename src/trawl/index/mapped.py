"""The index's segment files mapped by the crawl process, kept from filling its memory.

tantivy maps every segment file it opens (its mmap directory), and its merges read
the segments through those mappings: each page a merge reads stays resident in the
process (file-backed RSS) while the segment is mapped, so the crawl process grew with
the index's largest merge (256 of its 578 MB at 30,000 pages; tantivy's default merge
policy merges segments of up to 10 million documents). tantivy-py sets no merge policy
and has no directory but the mmap one, so ``MappedPages`` bounds the pages instead:
it watches the process's file-backed RSS (one read of ``/proc/self/status``) and, once
it has grown ``limit`` bytes past what it was after the last look, asks the kernel to
page out the mappings of the index's files (``madvise(MADV_PAGEOUT)``, Linux 5.4 and
later). They are clean file pages: read again (from the page cache if another process,
a searcher, maps them too; from disk if not) when next used.

MADV_PAGEOUT never changes what memory holds (MADV_DONTNEED would drop an anonymous
mapping's contents): a mapping that went away between the read of /proc/self/maps and
the call, and whatever took its address, come to no harm.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import logging
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from trawl.ticker import Ticker

__all__ = ["MappedPages", "file_rss", "mappings", "page_out"]

log = logging.getLogger(__name__)

EVERY = 0.1  # seconds between two looks at the file-backed RSS
_MADV_PAGEOUT = 21  # asm-generic/mman-common.h


def file_rss(status: Path = Path("/proc/self/status")) -> int:
    """The process's file-backed resident bytes (RssFile); 0 where not known."""
    try:
        for line in status.read_text().splitlines():
            if line.startswith("RssFile:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def mappings(maps: Path = Path("/proc/self/maps")) -> Iterator[tuple[int, int, str]]:
    """(start, end, path) of each file mapping of the process."""
    try:
        text = maps.read_text()
    except OSError:
        return
    for line in text.splitlines():
        fields = line.split(None, 5)
        if len(fields) == 6 and fields[5].startswith("/"):
            low, _, high = fields[0].partition("-")
            yield int(low, 16), int(high, 16), fields[5]


@functools.cache
def _madvise() -> Callable[[int, int, int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    fn = libc.madvise
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def page_out(start: int, length: int) -> bool | None:
    """Ask the kernel to page out ``[start, start + length)``: True if it took the
    advice; None if it cannot (no MADV_PAGEOUT: an older kernel, not Linux); False if
    the range is not mapped (any more: the mapping went away meanwhile)."""
    madvise = _madvise()
    if madvise is None:
        return None
    if madvise(start, length, _MADV_PAGEOUT) == 0:
        return True
    err = ctypes.get_errno()
    return False if err == errno.ENOMEM else None


class MappedPages:
    """Keeps the resident pages of the files under ``directory`` mapped by this
    process to about ``limit`` bytes (see the module doc), looking every ``every``
    seconds in a thread of its own (``start``/``stop``), or when asked (``check``)."""

    def __init__(
        self,
        directory: Path,
        *,
        limit: int,
        every: float = EVERY,
        resident: Callable[[], int] = file_rss,
        mapped: Callable[[], Iterator[tuple[int, int, str]]] = mappings,
        advise: Callable[[int, int], bool | None] = page_out,
    ) -> None:
        self._prefix = str(directory.resolve()) + "/"
        self._limit = limit
        self._resident = resident
        self._mapped = mapped
        self._advise = advise
        self._base = resident()
        self._off = False  # the kernel cannot page out: nothing more to do
        self._ticker = Ticker(self._tick, every, name="trawl-pageout")
        self.paged_out = 0  # page-outs made

    def check(self) -> bool:
        """Page the directory's mappings out if the file-backed RSS has grown more
        than ``limit`` since the last look that did; whether it did."""
        if self._off:
            return False
        resident = self._resident()
        if resident - self._base <= self._limit:
            self._base = min(self._base, resident)
            return False
        for start, end, path in self._mapped():
            if path.startswith(self._prefix) and self._advise(start, end - start) is None:
                log.info("the kernel cannot page out mapped files: index pages not bounded")
                self._off = True
                return False
        self.paged_out += 1
        # What stayed (other files' pages, or the index's pages read meanwhile) is the
        # new floor: growth is counted from here.
        self._base = self._resident()
        return True

    def start(self) -> None:
        self._ticker.start()

    def stop(self) -> None:
        self._ticker.stop()

    def _tick(self) -> bool:
        try:
            self.check()
        except Exception:  # never the crawl's end: the pages stay, that is all
            log.exception("paging out the index's mapped files failed")
            return False
        return True
