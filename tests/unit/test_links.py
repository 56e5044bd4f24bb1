"""The link graph's log (archive/links.py) and its rows (export_links.py)."""

from __future__ import annotations

import random

from trawl import urls
from trawl.archive.links import LinkLog, read_link_records
from trawl.export_links import LINK_FIELDS, link_rows
from trawl.storage.blobs import LINK_LOG
from trawl.storage.memory import MemoryBlobStore


def test_a_writer_opened_after_a_crash_starts_its_own_stream() -> None:
    blobs = MemoryBlobStore()
    writer = blobs.open_writer(LINK_LOG, committed=None, max_bytes=1 << 20)
    first = LinkLog(writer)
    first.add("http://a.test/1", 1.0, ["http://a.test/x"], ["x"], [])
    first.flush()
    committed = writer.sync()
    first.add("http://a.test/lost", 2.0, ["http://a.test/y"], [], [])
    first.flush()  # written, never committed: cut off when the log is opened again
    writer = blobs.open_writer(LINK_LOG, committed=committed, max_bytes=1 << 20)
    again = LinkLog(writer)
    again.add("http://a.test/2", 3.0, ["http://a.test/z"], [], [])
    again.flush()
    end = writer.sync()
    assert end.index == committed.index + 1  # a stream of its own
    assert [r["u"] for r in read_link_records(blobs, LINK_LOG, end)] == [
        "http://a.test/1",
        "http://a.test/2",
    ]


def test_records_are_read_back_across_frames_and_segments() -> None:
    blobs = MemoryBlobStore()
    writer = blobs.open_writer(LINK_LOG, committed=None, max_bytes=300)
    log = LinkLog(writer)
    for page in range(40):
        links = [f"http://a.test/{page}/{i}" for i in range(5)]
        log.add(f"http://a.test/{page}", 10.0 + page, links, ["x"] * 5, [("http://ad.test/", "")])
        if page % 3 == 2:
            log.flush()  # one frame per group commit
    log.flush()
    end = writer.sync()
    assert end.index > 1  # rotated: frames never straddle segments
    records = list(read_link_records(blobs, LINK_LOG, end))
    assert [r["u"] for r in records] == [f"http://a.test/{p}" for p in range(40)]
    assert records[7]["l"][2] == ["http://a.test/7/2", "x"]
    assert records[7]["n"] == [["http://ad.test/", ""]]
    assert (log.pages, log.links) == (40, 240)
    # A reader stops at the committed end: what was appended after it is not there.
    log.add("http://a.test/late", 99.0, ["http://a.test/z"], [], [])
    log.flush()
    assert len(list(read_link_records(blobs, LINK_LOG, end))) == 40


def test_a_site_seen_again_after_megabytes_of_others_is_told_by_reference() -> None:
    # A site's navigation repeats on each of its pages, and a crawl of many hosts puts
    # megabytes of other sites' links between two of them: the stream's window reaches
    # back 4 MiB (level 3's own, 2 MiB, would not). Random link text, so only a
    # reference back to the first copy makes the second small.
    rng = random.Random(7)

    def page(site: str) -> list[str]:
        return [f"http://{site}.test/{rng.getrandbits(64):x}" for _ in range(400)]

    blobs = MemoryBlobStore()
    writer = blobs.open_writer(LINK_LOG, committed=None, max_bytes=64 << 20)
    log = LinkLog(writer)
    nav = page("nav")
    log.add("http://nav.test/1", 1.0, nav, [], [])
    log.flush()
    between = 0
    for n in range(170):
        links = page(f"other{n}")
        between += sum(len(u) + 8 for u in links)  # as JSON: ["URL",""],
        log.add(f"http://other{n}.test/", 2.0, links, [], [])
        if n % 20 == 19:
            log.flush()
    log.flush()
    assert 5 << 19 < between < 7 << 19  # 2.5 to 3.5 MiB: past 2 MiB, within 4
    first = writer.position().offset
    log.add("http://nav.test/1", 3.0, nav, [], [])
    log.flush()
    assert writer.position().offset - first < 1_000  # the first copy's block: 9 KB
    end = writer.sync()
    records = list(read_link_records(blobs, LINK_LOG, end))
    assert [r["l"] for r in (records[0], records[-1])] == [[[u, ""] for u in nav]] * 2


def test_rows_carry_what_a_ranking_pipeline_joins_on() -> None:
    record = {
        "u": "http://a.test/",
        "t": 1_700_000_000.5,
        "l": [["http://b.test/x", "Read more"], ["http://a.test/y", ""]],
        "n": [["http://ads.test/", "Sponsor"]],
    }
    rows = next(link_rows(iter([record])))
    names = [name for name, _ in LINK_FIELDS]
    first = dict(zip(names, rows[0], strict=True))
    assert first["source_url"] == "http://a.test/"
    assert first["target_url"] == "http://b.test/x"
    assert first["anchor"] == "Read more"
    assert first["nofollow"] is False
    assert (first["source_host"], first["target_host"]) == ("a.test", "b.test")
    assert first["source_fp"] == urls.fingerprint("http://a.test/")
    assert first["target_fp"] == urls.fingerprint("http://b.test/x")
    assert first["fetched_at"].timestamp() == 1_700_000_000.5
    assert [dict(zip(names, r, strict=True))["position"] for r in rows] == [0, 1, 2]
    assert [dict(zip(names, r, strict=True))["nofollow"] for r in rows] == [False, False, True]


def test_a_repeated_record_of_a_fleet_is_exported_once() -> None:
    record = {"u": "http://a.test/", "t": 5.0, "l": [["http://a.test/x", ""]]}
    revisit = {**record, "t": 6.0}
    assert len(list(link_rows(iter([record, record, revisit]), dedupe=True))) == 2
    assert len(list(link_rows(iter([record, record, revisit])))) == 3
