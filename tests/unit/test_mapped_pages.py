"""The index's mapped files kept to a bound (trawl.index.mapped): paged out past their
limit, the index's files only; and on this kernel, really given back."""

from __future__ import annotations

import mmap
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from trawl.index.mapped import MappedPages, file_rss, mappings, page_out

MB = 1 << 20


class Fake:
    """A process's file-backed RSS and mappings, and the advice it took."""

    def __init__(self, index: Path) -> None:
        self.rss = 50 * MB
        self.maps = [
            (0x1000, 0x5000, f"{index.resolve()}/seg.idx"),
            (0x9000, 0xA000, f"{index.resolve()}/old.pos (deleted)"),
            (0x20000, 0x30000, "/usr/lib/libc.so.6"),
            (0x40000, 0x41000, f"{index.resolve()}-other/x.idx"),  # another directory
        ]
        self.advised: list[tuple[int, int]] = []
        self.answer: bool | None = True

    def resident(self) -> int:
        return self.rss

    def mapped(self) -> Iterator[tuple[int, int, str]]:
        return iter(self.maps)

    def advise(self, start: int, length: int) -> bool | None:
        self.advised.append((start, length))
        self.rss -= 10 * MB  # what the kernel gave back
        return self.answer


def watcher(fake: Fake, index: Path, limit: int = 32 * MB) -> MappedPages:
    return MappedPages(
        index, limit=limit, resident=fake.resident, mapped=fake.mapped, advise=fake.advise
    )


def test_pages_out_the_index_files_once_past_the_limit(tmp_path: Path) -> None:
    index = tmp_path / "index"
    fake = Fake(index)
    pages = watcher(fake, index)
    fake.rss += 32 * MB  # up to the limit: nothing done
    assert not pages.check() and fake.advised == []
    fake.rss += 1
    assert pages.check()
    # The index's files, a deleted one too (a merged segment still mapped); not the
    # C library, nor a directory whose name starts like the index's.
    assert fake.advised == [(0x1000, 0x4000), (0x9000, 0x1000)]
    assert pages.paged_out == 1
    # Counted from what stayed: 20 MB given back, so 32 MB more before the next time.
    fake.rss += 32 * MB
    assert not pages.check()
    fake.rss += MB
    assert pages.check() and pages.paged_out == 2


def test_the_floor_follows_the_rss_down(tmp_path: Path) -> None:
    index = tmp_path / "index"
    fake = Fake(index)
    pages = watcher(fake, index)
    fake.rss -= 40 * MB  # a merge ended, its segments unmapped
    assert not pages.check()
    fake.rss += 33 * MB
    assert pages.check()


def test_a_kernel_without_pageout_is_let_be(tmp_path: Path) -> None:
    index = tmp_path / "index"
    fake = Fake(index)
    fake.answer = None
    pages = watcher(fake, index)
    fake.rss += 64 * MB
    assert not pages.check()
    assert len(fake.advised) == 1
    assert not pages.check() and len(fake.advised) == 1  # not asked again


def test_the_thread_starts_and_stops(tmp_path: Path) -> None:
    fake = Fake(tmp_path)
    pages = watcher(fake, tmp_path)
    pages.start()
    pages.start()  # once
    pages.stop()
    pages.stop()


def _resident_of(path: Path) -> int:
    """Resident bytes of this process's mappings of ``path`` (/proc/self/smaps)."""
    total, current = 0, ""
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split(None, 5)
        if len(fields) >= 5 and "-" in fields[0] and ":" in fields[3]:
            current = fields[5] if len(fields) == 6 else ""
        elif line.startswith("Rss:") and current == str(path):
            total += int(line.split()[1]) * 1024
    return total


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's madvise")
def test_on_this_kernel_the_pages_are_given_back(tmp_path: Path) -> None:
    index = tmp_path / "index"
    index.mkdir()
    segment = index / "seg.store"
    segment.write_bytes(bytes(range(256)) * (16 * MB // 256))
    with segment.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        assert sum(m[i + 1] for i in range(0, len(m), 4096)) == len(m) // 4096  # all read
        before = _resident_of(segment.resolve())
        assert before >= 8 * MB
        assert file_rss() >= before
        found = [(s, e) for s, e, p in mappings() if p == str(segment.resolve())]
        assert len(found) == 1
        if page_out(found[0][0], 4096) is None:
            pytest.skip("this kernel has no MADV_PAGEOUT")
        # The real mappings and advice; the RSS said to have grown 64 MB since the start.
        rss = iter([0, 64 * MB, 0])
        pages = MappedPages(index, limit=MB, resident=lambda: next(rss))
        assert pages.check()
        assert _resident_of(segment.resolve()) < before // 4
        # The mapping reads as ever: the pages come back from the file.
        assert m[4097] == 1 and m[len(m) - 1] == 255
