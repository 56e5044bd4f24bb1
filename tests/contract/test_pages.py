"""The PageStore contract: kept pages by content hash, and the latest fetch of each URL."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.contract.conftest import Backend
from trawl.models import Location
from trawl.storage.base import FetchRecord, PageRecord


def page(n: int, *, host: str = "a.example", indexed: bool = False) -> PageRecord:
    return PageRecord(
        content_hash=f"h{n:03d}",
        url=f"https://{host}/{n}",
        host=host,
        fp=n,
        fetched_at=1_000.0 + n,
        title=f"Page {n}",
        language="en" if n % 2 else None,
        warc=Location("trawl-00001.warc.gz", 100 * n, 90),
        text=Location("trawl-00001.jsonl.gz", 10 * n, 9),
        indexed=indexed,
    )


def fetch(fp: int, *, status: int = 200, content_hash: str | None = None) -> FetchRecord:
    return FetchRecord(
        host="a.example",
        fp=fp,
        url=f"https://a.example/{fp}",
        final_url=f"https://a.example/{fp}?final",
        status=status,
        fetched_at=2_000.0 + fp,
        warc=Location("trawl-00002.warc.gz", fp, 50),
        content_hash=content_hash,
        outcome=None,
    )


def test_add_then_find(backend: Backend) -> None:
    pages = backend.store().pages
    assert pages.find("h001") is None
    assert pages.count() == 0
    pages.add(page(1))
    pages.add(page(2))
    assert pages.find("h001") == page(1)
    assert pages.find("h002") == page(2)
    assert pages.count() == 2


def test_a_text_not_found_is_found_once_added(backend: Backend) -> None:
    """Asked again and again (a parse asks twice), it is missing until its own add."""
    pages = backend.store().pages
    assert pages.find("h001") is None
    assert pages.claim("h001", page(1).url) is None
    pages.add(page(2))  # another text: h001 still missing
    assert pages.find("h001") is None
    pages.add(page(1))
    assert pages.find("h001") == page(1)
    assert pages.claim("h001", "https://a.example/other") == page(1).url
    backend.restart(crash=True)  # neither committed: both missing again
    pages = backend.store().pages
    assert pages.find("h001") is None and pages.find("h002") is None


def test_count_duplicate(backend: Backend) -> None:
    pages = backend.store().pages
    pages.add(page(1))
    pages.count_duplicate("h001")
    pages.count_duplicate("h001")
    pages.count_duplicate("unknown")  # no page: nothing happens
    found = pages.find("h001")
    assert found is not None and found.duplicates == 2
    assert pages.count() == 1


def test_pages_in_storage_order(backend: Backend) -> None:
    pages = backend.store().pages
    for n in (5, 1, 3):
        pages.add(page(n))
    assert [p.content_hash for p in pages.pages()] == ["h005", "h001", "h003"]


def test_unindexed_in_storage_order_with_a_limit(backend: Backend) -> None:
    pages = backend.store().pages
    for n in (4, 2, 7, 1):
        pages.add(page(n, indexed=n == 7))
    assert [p.content_hash for p in pages.unindexed(10)] == ["h004", "h002", "h001"]
    assert [p.content_hash for p in pages.unindexed(2)] == ["h004", "h002"]


def test_mark_indexed_and_back(backend: Backend) -> None:
    pages = backend.store().pages
    for n in range(1, 4):
        pages.add(page(n))
    pages.mark_indexed(["h001", "h003", "unknown"])
    assert [p.content_hash for p in pages.unindexed(10)] == ["h002"]
    found = pages.find("h003")
    assert found is not None and found.indexed
    pages.mark_indexed(["h001"], indexed=False)
    assert [p.content_hash for p in pages.unindexed(10)] == ["h001", "h002"]


def test_record_fetch_keeps_the_latest_per_url(backend: Backend) -> None:
    pages = backend.store().pages
    assert pages.fetch_of("a.example", 1) is None
    pages.record_fetch(fetch(1, status=503))
    pages.record_fetch(fetch(2))
    pages.record_fetch(fetch(1, status=200, content_hash="h001"))
    assert pages.fetch_of("a.example", 1) == fetch(1, status=200, content_hash="h001")
    assert pages.fetch_of("a.example", 2) == fetch(2)
    assert pages.fetch_of("b.example", 1) is None  # keyed by host and fingerprint


def test_set_fetch_outcome(backend: Backend) -> None:
    pages = backend.store().pages
    pages.record_fetch(fetch(1))
    pages.set_fetch_outcome("a.example", 1, content_hash="h001", outcome="stored")
    pages.set_fetch_outcome("a.example", 9, content_hash=None, outcome="noindex")  # unknown
    found = pages.fetch_of("a.example", 1)
    assert found is not None
    assert (found.content_hash, found.outcome) == ("h001", "stored")
    assert found.status == 200 and found.warc == fetch(1).warc
    assert pages.fetch_of("a.example", 9) is None


def test_an_outcome_on_a_committed_fetch_waits_for_the_commit(backend: Backend) -> None:
    backend.store().pages.record_fetch(fetch(1))
    backend.commit()
    pages = backend.store().pages
    pages.set_fetch_outcome("a.example", 1, content_hash="h001", outcome="stored \u00e9")
    found = pages.fetch_of("a.example", 1)
    assert found is not None and (found.content_hash, found.outcome) == ("h001", "stored \u00e9")
    pages = backend.restart(crash=True).pages  # not committed: not kept
    found = pages.fetch_of("a.example", 1)
    assert found is not None and (found.content_hash, found.outcome) == (None, None)
    pages.set_fetch_outcome("a.example", 1, content_hash="h001", outcome="stored \u00e9")
    backend.commit()
    found = backend.restart(crash=True).pages.fetch_of("a.example", 1)
    assert found == replace(fetch(1), content_hash="h001", outcome="stored \u00e9")


def test_pages_and_fetches_survive_commit_and_restart(backend: Backend) -> None:
    pages = backend.store().pages
    pages.add(page(1))
    pages.record_fetch(fetch(1, content_hash="h001"))
    backend.commit()
    pages.add(page(2))
    pages.count_duplicate("h001")
    pages.mark_indexed(["h001"])
    pages.record_fetch(fetch(2))
    pages = backend.restart(crash=True).pages
    assert [p for p in pages.pages()] == [page(1)]
    assert pages.fetch_of("a.example", 1) == fetch(1, content_hash="h001")
    assert pages.fetch_of("a.example", 2) is None


def test_claim_keeps_a_text_for_one_url(backend: Backend) -> None:
    pages = backend.store().pages
    p = page(1)
    assert pages.claim(p.content_hash, p.url) is None  # the text is p's to keep
    pages.add(p)
    assert pages.claim(p.content_hash, p.url) is None  # its own text again: still its
    assert pages.claim(p.content_hash, "https://b.example/copy") == p.url
    backend.commit()
    assert pages.claim(p.content_hash, "https://b.example/copy") == p.url


def test_peers_claim_one_text_once_before_any_commit(backend: Backend) -> None:
    peer = backend.open_peer()
    if peer is None:
        pytest.skip(f"{backend.name} has one writer at a time")
    try:
        mine = backend.store().pages
        assert mine.claim("h777", "https://a.example/1") is None  # claimed, not stored
        assert peer.pages.claim("h777", "https://b.example/1") == "https://a.example/1"
        assert peer.pages.claim("h778", "https://b.example/2") is None
    finally:
        peer.close(commit=False)


def test_claimant_names_the_url_a_text_is_kept_for(backend: Backend) -> None:
    pages = backend.store().pages
    p = page(1)
    assert pages.claimant(p.content_hash) is None
    pages.add(p)
    assert pages.claimant(p.content_hash) == p.url
    backend.commit()
    assert pages.claimant(p.content_hash) == p.url
    peer = backend.open_peer()
    if peer is None:
        return
    try:  # another worker's text, claimed and not committed: its URL all the same
        assert peer.pages.claim("h780", "https://b.example/founder") is None
        assert pages.claimant("h780") == "https://b.example/founder"
    finally:
        peer.close(commit=False)


def test_a_crash_gives_back_claims_of_texts_never_stored(backend: Backend) -> None:
    pages = backend.store().pages
    kept = page(2)
    assert pages.claim(kept.content_hash, kept.url) is None
    pages.add(kept)
    backend.commit()
    assert pages.claim("h779", "https://a.example/lost") is None
    backend.restart(crash=True)
    pages = backend.store().pages
    assert pages.claim("h779", "https://b.example/again") is None  # the claim went back
    assert pages.claim(kept.content_hash, "https://b.example/copy") == kept.url
