"""What only the S3 blob store has: uploads, the bucket after a crash, other processes.

Against the session's SeaweedFS (tests/conftest.py), each test in a bucket of its own;
the contract every backend keeps is tests/contract/test_blobs.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from trawl.errors import StorageError
from trawl.models import Location, Position
from trawl.storage.blobs import TEXT_LOG, WARC_LOG, SegmentWriter
from trawl.storage.local import LocalBlobStore
from trawl.storage.open import open_blobs
from trawl.storage.s3 import S3BlobStore, S3Objects
from trawl.testing.s3server import SeaweedS3

CHILD = str(Path(__file__).with_name("s3_child.py"))
DRIVER = str(Path(__file__).with_name("tmpfs_driver.py"))


def _keys(url: str) -> dict[str, int]:
    """Every object under the URL's prefix, as a client other than the store sees it."""
    return {o.key: o.size for o in S3Objects.from_url(url).list_all("text")}


def _store(url: str, tmp_path: Path) -> S3BlobStore:
    return S3BlobStore.from_url(url, spool=tmp_path / "spool")


def _delete_bucket(url: str, server: SeaweedS3) -> None:
    """The bucket behind ``url`` deleted with all it holds (through SeaweedFS's filer)."""
    bucket = url.removeprefix("s3://").split("/")[0]
    where = f"http://127.0.0.1:{server.ports['filer.port']}/buckets/{bucket}?recursive=true"
    urllib.request.urlopen(urllib.request.Request(where, method="DELETE"), timeout=30).close()
    # The S3 gateway learns of it from the filer a moment later (a loaded CI once saw an
    # upload succeed after the delete): wait until its S3 API refuses the bucket too.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            S3Objects.from_url(url).list_all("text")
        except Exception:  # what a client meets: the bucket is gone
            return
        time.sleep(0.05)


def _refused_from_then_on(w: SegmentWriter, upload: Callable[[], None]) -> None:
    """``upload`` (a flush's function) fails, and no later step gives a position."""
    with pytest.raises(StorageError, match="NoSuchBucket"):
        upload()
    for step in (w.sync, w.flush, lambda: w.append(b"more")):
        with pytest.raises(StorageError, match="nothing past the last commit is kept"):
            step()
    w.abandon()


def test_nothing_is_in_the_bucket_before_sync_and_all_of_it_after(
    s3_url: str, tmp_path: Path
) -> None:
    """Upload before reference: ``sync`` returns a position only once the bytes up to
    it are readable by anyone; until then the bucket has none of them."""
    w = _store(s3_url, tmp_path).open_writer(TEXT_LOG, committed=None, max_bytes=1 << 20)
    a = w.append(b"first")
    b = w.append(b"second")
    assert _keys(s3_url) == {}
    fresh = S3BlobStore.from_url(s3_url)
    assert fresh.segments(TEXT_LOG) == []
    with pytest.raises(FileNotFoundError):
        fresh.read(TEXT_LOG, a)
    end = w.sync()
    assert end == Position(1, 11)
    # One commit, one PUT: a part holding exactly the bytes appended since the last.
    assert _keys(s3_url) == {"text/trawl-00001.jsonl.gz.parts/0000000000000000": 11}
    assert [fresh.read(TEXT_LOG, loc) for loc in (a, b)] == [b"first", b"second"]
    c = w.append(b"third")
    assert w.sync() == Position(1, 16)
    assert _keys(s3_url)["text/trawl-00001.jsonl.gz.parts/0000000000000011"] == 5
    assert fresh.read(TEXT_LOG, c) == b"third"
    assert fresh.read_range(TEXT_LOG, TEXT_LOG.segment(1), 0, None) == b"firstsecondthird"
    # A sync with nothing new uploads nothing.
    before = _keys(s3_url)
    assert w.sync() == Position(1, 16)
    assert _keys(s3_url) == before
    w.close()
    # Closed: the segment is one object and its parts are gone.
    assert _keys(s3_url) == {"text/trawl-00001.jsonl.gz": 16}
    assert fresh.read(TEXT_LOG, b) == b"second"
    assert fresh.locate(TEXT_LOG, a.file) == s3_url + "/text/trawl-00001.jsonl.gz"


def test_flush_leaves_the_upload_to_its_function_and_a_rotation_first_wins(
    s3_url: str, tmp_path: Path
) -> None:
    """The group commit's ``flush``: the position at once, the part uploaded by the
    function it returns (run in a thread, off the event loop). A segment uploaded whole
    before that function runs gets no part after its parts were deleted."""
    w = _store(s3_url, tmp_path).open_writer(TEXT_LOG, committed=None, max_bytes=1 << 20)
    a = w.append(b"first")
    end, upload = w.flush()
    assert end == Position(1, 5)
    assert _keys(s3_url) == {}  # nothing uploaded on the caller's thread
    worker = threading.Thread(target=upload)
    worker.start()
    worker.join()
    assert _keys(s3_url) == {"text/trawl-00001.jsonl.gz.parts/0000000000000000": 5}
    w.append(b"second")
    end, late = w.flush()
    w.rotate()  # segment 1 goes up whole (with "second") in the writer's thread
    w.sync()  # which has ended when sync returns: before the part's upload
    late()
    assert _keys(s3_url) == {"text/trawl-00001.jsonl.gz": 11}
    fresh = S3BlobStore.from_url(s3_url)
    assert fresh.read(TEXT_LOG, a) == b"first"
    assert fresh.read_range(TEXT_LOG, TEXT_LOG.segment(1), 0, None) == b"firstsecond"
    assert w.flush()[0] == Position(2, 0)
    w.close()


def test_a_failed_flush_upload_blocks_every_later_position(
    s3_url: str, s3_server: SeaweedS3, tmp_path: Path
) -> None:
    """A flush's part that never reached the bucket: no later sync, flush or append may
    give a position that would cover its bytes (the log is reopened at the last commit)."""
    w = _store(s3_url, tmp_path).open_writer(TEXT_LOG, committed=None, max_bytes=1 << 20)
    w.append(b"kept")
    committed = w.sync()
    w.append(b"never uploaded")
    _, upload = w.flush()
    _delete_bucket(s3_url, s3_server)
    _refused_from_then_on(w, upload)
    assert committed == Position(1, 4)


class _Held(S3Objects):
    """Uploads of whole files (a segment rotated or closed) wait for ``gate``; the
    parts of commits go up at once."""

    gate: threading.Event

    def put(self, key: str, data: bytes | Path) -> None:
        if isinstance(data, Path):
            assert self.gate.wait(60)
        super().put(key, data)


def _held(url: str, tmp_path: Path) -> tuple[S3BlobStore, threading.Event]:
    objects = _Held.from_url(url)
    assert isinstance(objects, _Held)
    objects.gate = threading.Event()
    return S3BlobStore(objects, spool=tmp_path / "spool"), objects.gate


def _blocked(step: Callable[[], object]) -> threading.Thread:
    """``step`` started in a thread that is still in it a moment later."""
    thread = threading.Thread(target=step)
    thread.start()
    thread.join(0.5)
    assert thread.is_alive()
    return thread


def test_a_rotated_segment_goes_up_whole_in_the_writers_thread(s3_url: str, tmp_path: Path) -> None:
    """The append that rotates returns while the segment's whole upload is under way
    (the event loop goes on); its records are read back from its spool meanwhile; and
    no position past it is durable before that upload ended."""
    store, gate = _held(s3_url, tmp_path)
    w = store.open_writer(TEXT_LOG, committed=None, max_bytes=10)
    first = [w.append(b"aaaa"), w.append(b"bbbb")]
    _, upload = w.flush()
    upload()  # a part: what a commit made durable
    nxt = w.append(b"cccc")  # rotates; the whole upload waits for the gate
    assert nxt.file == TEXT_LOG.segment(2)
    assert _keys(s3_url) == {"text/trawl-00001.jsonl.gz.parts/0000000000000000": 8}
    assert [w.read(loc) for loc in [*first, nxt]] == [b"aaaa", b"bbbb", b"cccc"]
    assert w.segments() == [TEXT_LOG.segment(1), TEXT_LOG.segment(2)]
    end, upload = w.flush()
    assert end == Position(2, 4)
    committing = _blocked(upload)  # segment 2's part waits for segment 1's whole
    gate.set()
    committing.join()
    assert _keys(s3_url) == {
        "text/trawl-00001.jsonl.gz": 8,
        "text/trawl-00002.jsonl.gz.parts/0000000000000000": 4,
    }
    fresh = S3BlobStore.from_url(s3_url)
    assert [fresh.read(TEXT_LOG, loc) for loc in [*first, nxt]] == [b"aaaa", b"bbbb", b"cccc"]
    w.sync()  # sees the upload ended: segment 1's spool goes
    assert len(list((tmp_path / "spool").iterdir())) == 1
    assert [w.read(loc) for loc in first] == [b"aaaa", b"bbbb"]  # from the bucket now
    w.close()
    assert _keys(s3_url) == {"text/trawl-00001.jsonl.gz": 8, "text/trawl-00002.jsonl.gz": 4}
    assert list((tmp_path / "spool").iterdir()) == []


def test_bytes_only_a_rotation_uploads_are_durable_only_once_it_ended(
    s3_url: str, tmp_path: Path
) -> None:
    """Bytes appended since the last commit are in no part when the segment rotates:
    ``sync`` returns only once the whole segment holds them."""
    store, gate = _held(s3_url, tmp_path)
    w = store.open_writer(TEXT_LOG, committed=None, max_bytes=10)
    a = w.append(b"aaaaaaaa")
    b = w.append(b"bbb")  # rotates: "aaaaaaaa" is in no part
    syncing = _blocked(w.sync)
    assert _keys(s3_url) == {}
    gate.set()
    syncing.join()
    fresh = S3BlobStore.from_url(s3_url)
    assert [fresh.read(TEXT_LOG, loc) for loc in (a, b)] == [b"aaaaaaaa", b"bbb"]
    w.close()


def test_a_failed_rotation_upload_blocks_every_later_position(
    s3_url: str, s3_server: SeaweedS3, tmp_path: Path
) -> None:
    store, gate = _held(s3_url, tmp_path)
    w = store.open_writer(TEXT_LOG, committed=None, max_bytes=10)
    w.append(b"aaaa")
    committed = w.sync()
    w.append(b"bbbbbbbb")  # rotates
    _, upload = w.flush()
    _delete_bucket(s3_url, s3_server)
    gate.set()
    _refused_from_then_on(w, upload)
    assert committed == Position(1, 4)


def test_abandon_waits_for_a_rotation_under_way_then_a_reopen_cuts_back(
    s3_url: str, tmp_path: Path
) -> None:
    """A whole upload that landed after the next open's cut would put uncommitted
    bytes back in the bucket: ``abandon`` returns only once it has ended."""
    store, gate = _held(s3_url, tmp_path)
    w = store.open_writer(TEXT_LOG, committed=None, max_bytes=10)
    w.append(b"aaaa")
    committed = w.sync()
    w.append(b"bbbb")
    w.append(b"cccc")  # rotates: segment 1 (8 bytes, 4 committed) goes up whole
    abandoning = _blocked(w.abandon)
    gate.set()
    abandoning.join()
    assert _keys(s3_url)["text/trawl-00001.jsonl.gz"] == 8
    again = _store(s3_url, tmp_path).open_writer(TEXT_LOG, committed=committed, max_bytes=10)
    assert again.recovered_bytes == 4
    assert _keys(s3_url) == {"text/trawl-00001.jsonl.gz.parts/0000000000000000": 4}
    again.close()


def test_a_failed_upload_gives_no_position(
    s3_url: str, s3_server: SeaweedS3, tmp_path: Path
) -> None:
    """When the bucket refuses the part, ``sync`` raises: nothing can be committed."""
    w = _store(s3_url, tmp_path).open_writer(TEXT_LOG, committed=None, max_bytes=1 << 20)
    w.append(b"kept")
    committed = w.sync()
    w.append(b"never uploaded")
    _delete_bucket(s3_url, s3_server)
    with pytest.raises(StorageError, match="NoSuchBucket"):
        w.sync()
    assert committed == Position(1, 4)
    w.abandon()


def test_a_crash_after_upload_before_commit_drops_what_was_uploaded(
    s3_url: str, tmp_path: Path
) -> None:
    """A writer process uploads past its last commit (the rest of segment 1, then a
    rotation: segment 1 whole and a part of segment 2) and is killed with SIGKILL.
    Opened again at the commit, the bucket holds only the committed bytes, and the
    redone work lands where the lost work was."""
    proc = subprocess.Popen(
        [sys.executable, CHILD, "write", s3_url],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        committed_line = orjson.loads(proc.stdout.readline())
        assert proc.stdout.readline() == b"uploaded\n"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    committed = Position(*committed_line["end"])
    locs = [Location(**loc) for loc in committed_line["locs"]]
    assert committed == Position(1, 38)
    # The uploads past the commit are there before the reopen...
    assert _keys(s3_url) == {
        "text/trawl-00001.jsonl.gz": 64,
        "text/trawl-00002.jsonl.gz.parts/0000000000000000": 32,
    }
    again = _store(s3_url, tmp_path).open_writer(TEXT_LOG, committed=committed, max_bytes=64)
    # ...and gone after it: segment 1 is cut back to the commit, segment 2 deleted.
    assert again.recovered_bytes == 26 + 32
    assert _keys(s3_url) == {"text/trawl-00001.jsonl.gz.parts/0000000000000000": 38}
    fresh = S3BlobStore.from_url(s3_url)
    assert fresh.segments(TEXT_LOG) == [TEXT_LOG.segment(1)]
    assert [fresh.read(TEXT_LOG, loc) for loc in locs] == [
        b"committed record 0;",
        b"committed record 1;",
    ]
    redo = again.append(b"redone")
    assert redo == Location(TEXT_LOG.segment(1), 38, 6)
    again.sync()
    assert fresh.read(TEXT_LOG, redo) == b"redone"
    again.close()
    assert fresh.read_range(TEXT_LOG, TEXT_LOG.segment(1), 0, None) == (
        b"committed record 0;committed record 1;redone"
    )
    assert _keys(s3_url) == {"text/trawl-00001.jsonl.gz": 44}


def test_reopen_after_a_clean_close_starts_the_next_segment(s3_url: str, tmp_path: Path) -> None:
    """A clean close leaves the segment whole; the next writer starts a new segment
    instead of downloading it to grow it again."""
    blobs = _store(s3_url, tmp_path)
    w = blobs.open_writer(TEXT_LOG, committed=None, max_bytes=1 << 20)
    old = w.append(b"old")
    end = w.sync()
    w.close()
    again = blobs.open_writer(TEXT_LOG, committed=end, max_bytes=1 << 20)
    assert (again.recovered_bytes, again.position()) == (0, Position(2, 0))
    new = again.append(b"new")
    assert new == Location(TEXT_LOG.segment(2), 0, 3)
    again.sync()
    fresh = S3BlobStore.from_url(s3_url)
    assert (fresh.read(TEXT_LOG, old), fresh.read(TEXT_LOG, new)) == (b"old", b"new")
    again.close()
    assert _keys(s3_url) == {"text/trawl-00001.jsonl.gz": 3, "text/trawl-00002.jsonl.gz": 3}


def test_a_whole_segment_grown_again_after_a_crash_reads_as_one(
    s3_url: str, tmp_path: Path
) -> None:
    """Rotated whole, then a crash before the commit that followed: the writer reopens
    inside that segment, the reader finds the committed head and the new parts."""
    blobs = _store(s3_url, tmp_path)
    w = blobs.open_writer(TEXT_LOG, committed=None, max_bytes=8)
    w.append(b"abcd")
    committed = w.sync()
    w.append(b"efgh")
    w.append(b"ijkl")  # rotates: segment 1 whole with "efgh", never committed
    w.abandon()
    again = blobs.open_writer(TEXT_LOG, committed=committed, max_bytes=8)
    assert again.recovered_bytes == 4  # "efgh"; "ijkl" was never synced
    new = again.append(b"EF")
    again.sync()
    fresh = S3BlobStore.from_url(s3_url)
    assert fresh.read(TEXT_LOG, new) == b"EF"
    with fresh.open_range(TEXT_LOG, TEXT_LOG.segment(1), 1, None) as f:
        assert f.read() == b"bcdEF"
    again.close()
    assert _keys(s3_url) == {"text/trawl-00001.jsonl.gz": 6}


def test_a_reader_in_another_process_sees_committed_records(s3_url: str, tmp_path: Path) -> None:
    w = _store(s3_url, tmp_path).open_writer(TEXT_LOG, committed=None, max_bytes=20)
    records = [b"record number %d" % i for i in range(3)]  # 16 bytes: one per segment
    locs = [w.append(r) for r in records]
    w.sync()  # segments 1 and 2 whole (rotated), segment 3 growing (a part)
    args = [f"{loc.file}:{loc.offset}:{loc.length}" for loc in locs]
    out = subprocess.run(
        [sys.executable, CHILD, "read", s3_url, *args],
        capture_output=True,
        check=True,
        timeout=60,
    )
    assert [bytes.fromhex(line) for line in out.stdout.decode().split()] == records
    w.close()


def test_reader_threads_meet_rotations_and_read_every_committed_record(
    s3_url: str, tmp_path: Path
) -> None:
    """Threads read committed records while the writer syncs and rotates under them
    (a segment's parts replaced by the whole object between LIST and GET)."""
    blobs = _store(s3_url, tmp_path)
    w = blobs.open_writer(WARC_LOG, committed=None, max_bytes=200)
    committed: list[tuple[Location, bytes]] = []
    lock = threading.Lock()
    done = threading.Event()
    errors: list[BaseException] = []

    def reader() -> None:
        reads = 0
        while not done.is_set() or reads == 0:
            with lock:
                sample = list(committed[-8:])
            for loc, data in sample:
                try:
                    assert blobs.read(WARC_LOG, loc) == data
                except BaseException as exc:  # handed to the test thread
                    errors.append(exc)
                    return
                reads += 1

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for i in range(120):
            data = b"record %03d " % i + b"x" * (i % 40)
            loc = w.append(data)
            if i % 3 == 2:
                w.sync()
                with lock:
                    committed.append((loc, data))
    finally:
        done.set()
        for t in threads:
            t.join(timeout=60)
    assert not errors, errors[0]
    assert len(w.segments()) > 10
    w.close()


def _mount_prefix(tmp: Path) -> list[str] | None:
    """How tmpfs_driver.py can mount a tmpfs here (root, or a user namespace)."""
    probe = tmp / "probe"
    probe.mkdir()
    plan = tmp / "probe.json"
    steps = [["mount", "1M"], ["umount"]]
    plan.write_bytes(orjson.dumps({"mount": str(probe), "results": str(tmp / "p"), "steps": steps}))
    for prefix in (["unshare", "-m"], ["unshare", "-rm"]):
        done = subprocess.run([*prefix, sys.executable, DRIVER, str(plan)], capture_output=True)
        if done.returncode == 0:
            return prefix
    return None


def test_a_full_spool_disk_is_a_disk_full_error_and_loses_nothing_committed(
    s3_url: str, tmp_path: Path
) -> None:
    """The spool on a 2 MiB tmpfs: appends end in ``DiskFullError`` (the crawl's clean
    stop), and every record of the last commit is in the bucket."""
    prefix = _mount_prefix(tmp_path)
    if prefix is None:
        pytest.skip("cannot mount a tmpfs (unshare -m / -rm refused)")
    mount, out = tmp_path / "disk", tmp_path / "fill.json"
    mount.mkdir()
    run = [sys.executable, CHILD, "fill", s3_url, str(mount / "spool"), str(out)]
    steps = [["mount", "2M"], ["mkdir", "spool"], ["run", "fill", run], ["umount"]]
    plan = tmp_path / "plan.json"
    results = tmp_path / "results.json"
    plan.write_bytes(orjson.dumps({"mount": str(mount), "results": str(results), "steps": steps}))
    subprocess.run([*prefix, sys.executable, DRIVER, str(plan)], check=True, timeout=300)
    assert orjson.loads(results.read_bytes())["fill"]["rc"] == 0
    done = orjson.loads(out.read_bytes())
    assert done["ended"].startswith("DiskFullError: disk full writing "), done["ended"]
    committed = Position(*done["committed"])
    assert committed.index == 1 and committed.offset >= 16 * 64 * 1024
    w = _store(s3_url, tmp_path).open_writer(WARC_LOG, committed=committed, max_bytes=1 << 30)
    fresh = S3BlobStore.from_url(s3_url)
    data = fresh.read_range(WARC_LOG, WARC_LOG.segment(1), 0, None)
    assert len(data) == committed.offset
    for i in range(committed.offset // (64 * 1024)):
        record = data[i * 64 * 1024 : (i + 1) * 64 * 1024]
        assert record == b"%08d" % i + b"r" * (64 * 1024 - 8)
    w.close()


def test_wrong_credentials_are_a_clear_storage_error(
    s3_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    blobs = open_blobs(s3_url, spool=tmp_path / "spool")
    for call in (
        lambda: blobs.open_writer(TEXT_LOG, committed=None, max_bytes=100),
        lambda: blobs.segments(TEXT_LOG),
        lambda: blobs.read(TEXT_LOG, Location(TEXT_LOG.segment(1), 0, 4)),
    ):
        with pytest.raises(StorageError) as caught:
            call()
        message = str(caught.value)
        assert "access denied (SignatureDoesNotMatch)" in message
        assert "AWS_SECRET_ACCESS_KEY" in message
        assert s3_url in message
        assert "\n" not in message  # one line, not the client's debug dump


def test_the_server_refuses_unsigned_requests(s3_url: str, s3_server: SeaweedS3) -> None:
    """The test server checks identities, as a real service does: no anonymous access."""
    bucket = s3_url.removeprefix("s3://").split("/")[0]
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(f"{s3_server.endpoint}/{bucket}?list-type=2", timeout=30)
    assert caught.value.code == 403
    caught.value.close()


def test_missing_credentials_and_bucket_are_clear_storage_errors(
    s3_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing_bucket = S3BlobStore.from_url("s3://no-such-bucket/crawl")
    with pytest.raises(StorageError, match=r"S3 LIST s3://no-such-bucket/crawl/text.*NoSuchBucket"):
        missing_bucket.segments(TEXT_LOG)
    with pytest.raises(StorageError, match="not an s3://BUCKET/PREFIX URL"):
        S3BlobStore.from_url("s3:///nobucket")
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    with pytest.raises(StorageError, match=r"no S3 credentials .* set AWS_ACCESS_KEY_ID"):
        open_blobs(s3_url)


def test_open_blobs_takes_a_directory_as_before(tmp_path: Path) -> None:
    blobs = open_blobs(tmp_path)
    assert isinstance(blobs, LocalBlobStore)
    assert blobs.root == tmp_path
