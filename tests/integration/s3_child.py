"""Another process on the same bucket (run by tests/integration/test_s3_blobs.py).

    python s3_child.py read URL SEGMENT:OFFSET:LENGTH ...   prints each record, hex
    python s3_child.py write URL                             see ``write`` below
    python s3_child.py fill URL SPOOL OUT                    see ``fill`` below

Endpoint and credentials come from the AWS variables the test set.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import orjson

from trawl.errors import DiskFullError
from trawl.models import Location
from trawl.storage.blobs import TEXT_LOG, WARC_LOG
from trawl.storage.s3 import S3BlobStore


def read(url: str, specs: list[str]) -> None:
    blobs = S3BlobStore.from_url(url)
    for spec in specs:
        file, offset, length = spec.rsplit(":", 2)
        print(blobs.read(TEXT_LOG, Location(file, int(offset), int(length))).hex(), flush=True)


def write(url: str) -> None:
    """Commit two records (prints the position to commit and their locations), then
    upload more that is never committed: the rest of segment 1 and, rotated, a whole
    segment 1 and a part of segment 2; prints "uploaded" and waits to be killed."""
    blobs = S3BlobStore.from_url(url)
    w = blobs.open_writer(TEXT_LOG, committed=None, max_bytes=64)
    locs = [w.append(b"committed record %d;" % i) for i in range(2)]
    end = w.sync()
    print(orjson.dumps({"end": [end.index, end.offset], "locs": locs}).decode(), flush=True)
    w.append(b"uploaded, never committed;")
    w.append(b"this one rotates into segment 2;")
    w.sync()
    print("uploaded", flush=True)
    time.sleep(600)


def fill(url: str, spool: str, out: str) -> None:
    """Append 64 KiB records, committing every 4, with the spool on a small disk until
    the disk is full; writes to OUT how it ended and the last committed position."""
    blobs = S3BlobStore.from_url(url, spool=Path(spool))
    w = blobs.open_writer(WARC_LOG, committed=None, max_bytes=1 << 30)
    committed, records = None, 0
    try:
        while records < 10_000:
            w.append(b"%08d" % records + b"r" * (64 * 1024 - 8))
            records += 1
            if records % 4 == 0:
                committed = w.sync()
        ended = "never full"
    except DiskFullError as exc:
        w.abandon()
        ended = f"DiskFullError: {exc}"
    except Exception as exc:  # reported to the test, which fails on it
        ended = f"{type(exc).__name__}: {exc}"
    done = {"ended": ended, "committed": committed and [committed.index, committed.offset]}
    Path(out).write_bytes(orjson.dumps(done))


if __name__ == "__main__":
    command, url, *rest = sys.argv[1:]
    if command == "read":
        read(url, rest)
    elif command == "fill":
        fill(url, *rest)
    else:
        write(url)
