"""Pages, fetches, the parse queue, robots.txt, origin files, counters and meta in memory.

Each store works on plain containers handed to it by ``MemoryCrawlStore``, which
copies them at commit; the stores themselves know nothing of commits. Behaviour
follows the SQLite stores row for row (storage order, upserts, what a miss returns).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from trawl.jobs import ParseJob
from trawl.storage.base import FetchRecord, PageRecord, RobotsRow, claim_by_find, claimant_by_find
from trawl.storage.reasons import one_line


@dataclass(slots=True)
class QueueState:
    jobs: dict[int, str] = field(default_factory=dict)  # seq -> job as JSON, in seq order
    last_seq: int = 0  # the largest seq ever given: seqs are never used again


class MemoryPageStore:
    """The PageStore protocol; pages keep their insertion order (SQLite's rowid order)."""

    def __init__(self, pages: dict[str, PageRecord], fetches: dict[tuple[str, int], FetchRecord]):
        self._pages = pages
        self._fetches = fetches

    def find(self, content_hash: str) -> PageRecord | None:
        return self._pages.get(content_hash)

    def claim(self, content_hash: str, url: str) -> str | None:
        return claim_by_find(self, content_hash, url)

    def claimant(self, content_hash: str) -> str | None:
        return claimant_by_find(self, content_hash)

    def add(self, page: PageRecord) -> None:
        if page.content_hash in self._pages:  # the primary key of the SQLite table
            raise ValueError(f"page {page.content_hash} is stored already")
        self._pages[page.content_hash] = page

    def count_duplicate(self, content_hash: str) -> None:
        page = self._pages.get(content_hash)
        if page is not None:
            self._pages[content_hash] = replace(page, duplicates=page.duplicates + 1)

    def count(self) -> int:
        return len(self._pages)

    def unindexed(self, limit: int) -> list[PageRecord]:
        out: list[PageRecord] = []
        for page in self._pages.values():
            if len(out) >= limit:
                break
            if not page.indexed:
                out.append(page)
        return out

    def mark_indexed(self, content_hashes: list[str], *, indexed: bool = True) -> None:
        for h in content_hashes:
            page = self._pages.get(h)
            if page is not None:
                self._pages[h] = replace(page, indexed=indexed)

    def pages(self) -> Iterator[PageRecord]:
        yield from list(self._pages.values())

    def record_fetch(self, f: FetchRecord) -> None:
        self._fetches[(f.host, f.fp)] = replace(f, outcome=one_line(f.outcome))

    def set_fetch_outcome(
        self, host: str, fp: int, *, content_hash: str | None, outcome: str
    ) -> None:
        f = self._fetches.get((host, fp))
        if f is not None:
            self._fetches[(host, fp)] = replace(
                f, content_hash=content_hash, outcome=one_line(outcome)
            )

    def fetch_of(self, host: str, fp: int) -> FetchRecord | None:
        return self._fetches.get((host, fp))


class MemoryParseQueue:
    """The ParseQueue protocol; jobs are kept in their durable form, as SQLite keeps them."""

    def __init__(self, state: QueueState) -> None:
        self._s = state

    def put(self, job: ParseJob) -> int:
        self._s.last_seq = seq = self._s.last_seq + 1
        self._s.jobs[seq] = job.dump().decode()
        return seq

    def pending(self, *, after: int = 0, limit: int = 1000) -> list[tuple[int, ParseJob]]:
        out: list[tuple[int, ParseJob]] = []
        for seq, job in self._s.jobs.items():
            if len(out) >= limit:
                break
            if seq > after:
                out.append((seq, ParseJob.load(job)))
        return out

    def taken_over(self, *, limit: int = 1000) -> list[tuple[int, ParseJob]]:
        return []  # one process owns this queue: nothing to take over

    def ack(self, seq: int) -> None:
        self._s.jobs.pop(seq, None)

    def __len__(self) -> int:
        return len(self._s.jobs)


class MemoryRobotsStore:
    def __init__(self, rows: dict[str, RobotsRow]) -> None:
        self._rows = rows

    def load(self, host: str) -> RobotsRow | None:
        return self._rows.get(host)

    def save(self, row: RobotsRow) -> None:
        self._rows[row.host] = row


class MemoryOriginFileStore:
    def __init__(self, files: dict[tuple[str, str], tuple[int | None, bytes | None, float]]):
        self._files = files

    def load(self, kind: str, origin: str) -> tuple[int | None, bytes | None, float] | None:
        return self._files.get((kind, origin))

    def save(
        self,
        kind: str,
        origin: str,
        *,
        status: int | None,
        body: bytes | None,
        fetched_at: float,
        expires_at: float,
    ) -> None:
        self._files[(kind, origin)] = (status, body, float(expires_at))


class MemoryCounters:
    def __init__(self, totals: dict[str, int]) -> None:
        self._totals = totals

    def add(self, name: str, n: int = 1) -> None:
        if n:
            self._totals[name] = self._totals.get(name, 0) + n

    def get(self, name: str) -> int:
        return self._totals.get(name, 0)

    def with_prefix(self, prefix: str) -> dict[str, int]:
        """Counters under ``prefix`` (e.g. "dropped:"), keyed by the rest of the name."""
        return {
            k[len(prefix) :]: v for k, v in sorted(self._totals.items()) if k.startswith(prefix)
        }

    def all(self) -> dict[str, int]:
        return dict(self._totals)


class MemoryMeta:
    def __init__(self, values: dict[str, str]) -> None:
        self._values = values

    def get(self, key: str) -> str | None:
        return self._values.get(key)

    def set(self, key: str, value: str) -> None:
        self._values[key] = value
