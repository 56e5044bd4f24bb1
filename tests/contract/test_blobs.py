"""The BlobStore contract: every backend keeps the same rules for segment logs."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from trawl.errors import StorageError
from trawl.models import Location, Position
from trawl.storage.blobs import EVENT_LOG, TEXT_LOG, WARC_LOG, BlobStore, LogSpec


def test_append_then_read_back_by_location(blobs: BlobStore) -> None:
    w = blobs.open_writer(TEXT_LOG, committed=None, max_bytes=1 << 20)
    a = w.append(b"first record")
    b = w.append(b"second")
    assert a == Location(TEXT_LOG.segment(1), 0, 12)
    assert b == Location(TEXT_LOG.segment(1), 12, 6)
    assert w.read(b) == b"second"
    w.sync()
    assert blobs.read(TEXT_LOG, a) == b"first record"
    assert blobs.segments(TEXT_LOG) == [TEXT_LOG.segment(1)]
    w.close()


def test_rotation_at_the_size_limit_keeps_records_whole(blobs: BlobStore) -> None:
    w = blobs.open_writer(WARC_LOG, committed=None, max_bytes=10)
    locations = [w.append(bytes([65 + i]) * 4) for i in range(5)]
    w.sync()
    # 4 + 4 fit, the third would pass 10: each segment holds two records.
    assert [loc.file for loc in locations] == [
        WARC_LOG.segment(1),
        WARC_LOG.segment(1),
        WARC_LOG.segment(2),
        WARC_LOG.segment(2),
        WARC_LOG.segment(3),
    ]
    assert blobs.segments(WARC_LOG) == [WARC_LOG.segment(i) for i in (1, 2, 3)]
    for i, loc in enumerate(locations):
        assert blobs.read(WARC_LOG, loc) == bytes([65 + i]) * 4
    assert w.position() == Position(3, 4)
    w.close()


def test_a_record_larger_than_the_limit_gets_a_segment_of_its_own(blobs: BlobStore) -> None:
    w = blobs.open_writer(WARC_LOG, committed=None, max_bytes=4)
    first = w.append(b"x" * 10)
    second = w.append(b"y" * 10)
    assert (first.file, second.file) == (WARC_LOG.segment(1), WARC_LOG.segment(2))
    w.close()


def test_explicit_rotate_starts_the_next_segment(blobs: BlobStore) -> None:
    w = blobs.open_writer(WARC_LOG, committed=None, max_bytes=1 << 20)
    w.append(b"a")
    w.rotate()
    assert w.current == WARC_LOG.segment(2)
    assert w.append(b"header").file == WARC_LOG.segment(2)
    w.close()


def test_what_was_not_committed_is_cut_on_reopen(blobs: BlobStore) -> None:
    """The crash rule: a writer opened at the committed position drops the rest."""
    w = blobs.open_writer(TEXT_LOG, committed=None, max_bytes=8)
    w.append(b"kept")
    committed = w.sync()
    w.append(b"lost")  # same segment, after the commit
    w.append(b"lost too")  # rotated into a new segment
    w.sync()  # written, but the position was never committed
    # kill -9: the writer is gone without close; reopen at the committed position.
    again = blobs.open_writer(TEXT_LOG, committed=committed, max_bytes=8)
    assert again.recovered_bytes == len(b"lost") + len(b"lost too")
    assert again.position() == committed
    assert blobs.segments(TEXT_LOG) == [TEXT_LOG.segment(1)]
    assert blobs.read_range(TEXT_LOG, TEXT_LOG.segment(1), 0, None) == b"kept"
    # The redone work lands where the lost work was, once.
    redo = again.append(b"redo")
    assert redo == Location(TEXT_LOG.segment(1), 4, 4)
    again.close()
    w.close()  # the dead writer's handle (it has nothing unsynced)


def test_flush_then_durable_in_another_thread_while_appending(blobs: BlobStore) -> None:
    """``flush``: the position of what was appended, made durable by a function run in
    another thread while the writer goes on (and rotates); a reopen at that position
    keeps exactly what lay before it."""
    w = blobs.open_writer(TEXT_LOG, committed=None, max_bytes=8)
    kept = [w.append(b"one"), w.append(b"two")]
    end, durable = w.flush()
    assert end == w.position() == Position(1, 6)
    later = [w.append(b"three"), w.append(b"four")]  # the second one rotates
    worker = threading.Thread(target=durable)
    worker.start()
    worker.join()
    assert [w.read(loc) for loc in kept + later] == [b"one", b"two", b"three", b"four"]
    position, durable = w.flush()
    durable()
    assert position == w.position()
    again = blobs.open_writer(TEXT_LOG, committed=end, max_bytes=8)
    assert [blobs.read(TEXT_LOG, loc) for loc in kept] == [b"one", b"two"]
    assert again.recovered_bytes == len(b"three") + len(b"four")
    assert blobs.read_range(TEXT_LOG, TEXT_LOG.segment(1), 0, None) == b"onetwo"
    again.close()
    w.close()


def test_reopen_without_a_commit_starts_empty(blobs: BlobStore) -> None:
    w = blobs.open_writer(EVENT_LOG, committed=None, max_bytes=100)
    w.append(b"never committed\n")
    w.sync()
    again = blobs.open_writer(EVENT_LOG, committed=None, max_bytes=100)
    assert again.position() == Position(1, 0)
    assert blobs.read_range(EVENT_LOG, EVENT_LOG.segment(1), 0, None) == b""
    again.close()
    w.close()


def test_committed_records_survive_a_clean_reopen(blobs: BlobStore) -> None:
    w = blobs.open_writer(WARC_LOG, committed=None, max_bytes=6)
    locs = [w.append(b"rec%d" % i) for i in range(4)]
    end = w.sync()
    w.close()
    again = blobs.open_writer(WARC_LOG, committed=end, max_bytes=6)
    assert again.recovered_bytes == 0
    assert [blobs.read(WARC_LOG, loc) for loc in locs] == [b"rec%d" % i for i in range(4)]
    nxt = again.append(b"next")
    assert (WARC_LOG.index_of(nxt.file), nxt.offset) >= (end.index, 0)
    assert blobs.read(WARC_LOG, locs[-1]) == b"rec3"
    again.close()


def test_read_range_bounds(blobs: BlobStore) -> None:
    w = blobs.open_writer(EVENT_LOG, committed=None, max_bytes=1 << 20)
    w.append(b"line one\nline two\n")
    w.sync()
    seg = EVENT_LOG.segment(1)
    assert blobs.read_range(EVENT_LOG, seg, 5, 8) == b"one"
    assert blobs.read_range(EVENT_LOG, seg, 9, None) == b"line two\n"
    assert blobs.read_range(EVENT_LOG, EVENT_LOG.segment(7), 0, None) == b""
    with blobs.open_range(EVENT_LOG, seg, 5, 8) as f:
        assert f.read() == b"one"
    with blobs.open_range(EVENT_LOG, seg, 9, None) as f:
        assert f.read() == b"line two\n"
    with blobs.open_range(EVENT_LOG, EVENT_LOG.segment(7), 0, None) as f:
        assert f.read() == b""
    w.close()


def test_logs_are_independent(blobs: BlobStore) -> None:
    writers = {
        spec: blobs.open_writer(spec, committed=None, max_bytes=1 << 20)
        for spec in (WARC_LOG, TEXT_LOG, EVENT_LOG)
    }
    locs = {spec: w.append(spec.name.encode()) for spec, w in writers.items()}
    for spec, w in writers.items():
        w.sync()
        assert blobs.read(spec, locs[spec]) == spec.name.encode()
        w.close()


def test_a_location_outside_the_log_is_refused(blobs: BlobStore) -> None:
    w = blobs.open_writer(TEXT_LOG, committed=None, max_bytes=1 << 20)
    w.append(b"x")
    w.sync()
    bad: list[Callable[[], object]] = [
        lambda: blobs.read(TEXT_LOG, Location("../state.db", 0, 10)),
        lambda: blobs.read(TEXT_LOG, Location(WARC_LOG.segment(1), 0, 1)),
    ]
    for call in bad:
        with pytest.raises((ValueError, FileNotFoundError)):
            call()
    w.close()


def test_segment_names() -> None:
    spec = LogSpec("warc", "trawl", ".warc.gz")
    assert spec.segment(3) == "trawl-00003.warc.gz"
    assert spec.index_of("trawl-00003.warc.gz") == 3
    assert spec.index_of("trawl-123456.warc.gz") == 123456
    for bad in (
        "trawl-3.warc.gz",
        "x-00003.warc.gz",
        "trawl-00003.jsonl.gz",
        "../trawl-00001.warc.gz",
    ):
        assert spec.index_of(bad) is None


def test_many_writers_of_one_log_at_once(blobs: BlobStore) -> None:
    """A fleet's workers write one log side by side: each its own segments and its own
    committed end; every record is read through the plain log by its location."""
    a_spec, b_spec = WARC_LOG.for_writer("w1"), WARC_LOG.for_writer("w2")
    a = blobs.open_writer(a_spec, committed=None, max_bytes=10)
    b = blobs.open_writer(b_spec, committed=None, max_bytes=10)
    la = [a.append(b"a" * 6) for _ in range(3)]
    lb = [b.append(b"b" * 6) for _ in range(2)]
    assert la[0].file == "trawl-w1-00001.warc.gz" and lb[0].file == "trawl-w2-00001.warc.gz"
    a_end, b_end = a.sync(), b.sync()
    assert (a_end, b_end) == (Position(3, 6), Position(2, 6))
    for loc in la:
        assert blobs.read(WARC_LOG, loc) == b"a" * 6
    for loc in lb:
        assert blobs.read(WARC_LOG, loc) == b"b" * 6
    assert blobs.segments(a_spec) == [a_spec.segment(i) for i in (1, 2, 3)]
    assert blobs.segments(b_spec) == [b_spec.segment(i) for i in (1, 2)]
    assert blobs.segments(WARC_LOG) == []  # the plain log's own writer wrote nothing
    late = a.append(b"never committed")  # written, never committed: a crash follows
    a.close()
    b.close()
    # A writer reopened at its committed end cuts only its own uncommitted tail.
    again = blobs.open_writer(a_spec, committed=a_end, max_bytes=10)
    c = again.append(b"c")
    # It goes on in the committed segment, or starts the next (S3: segments are whole).
    assert c in (Location(a_spec.segment(3), 6, 1), Location(a_spec.segment(4), 0, 1))
    again.sync()
    assert blobs.read(WARC_LOG, c) == b"c"
    try:
        got = blobs.read(WARC_LOG, late)
    except (ValueError, FileNotFoundError, StorageError):
        got = b""
    assert got != b"never committed"
    for loc in lb:
        assert blobs.read(WARC_LOG, loc) == b"b" * 6
    again.close()


def test_writer_segment_names() -> None:
    spec = WARC_LOG.for_writer("host1.4242_ab")
    assert spec.key == "warc@host1.4242_ab" and WARC_LOG.key == "warc"
    assert spec.segment(7) == "trawl-host1.4242_ab-00007.warc.gz"
    assert spec.index_of(spec.segment(7)) == 7
    assert spec.index_of(WARC_LOG.segment(7)) is None
    assert WARC_LOG.index_of(spec.segment(7)) is None
    assert WARC_LOG.owner_of(spec.segment(7)) == spec
    assert WARC_LOG.owner_of(WARC_LOG.segment(7)) == WARC_LOG
    for bad in ("trawl-a/b-00001.warc.gz", "trawl--00001.warc.gz", "x-w-00001.warc.gz"):
        assert WARC_LOG.owner_of(bad) is None
    for writer in ("", "a/b", "a-b", "../x"):
        with pytest.raises(ValueError, match="writer id"):
            WARC_LOG.for_writer(writer)
