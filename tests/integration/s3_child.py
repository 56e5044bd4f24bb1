"""Another process on the same bucket (run by tests/integration/test_s3_blobs.py).

    python s3_child.py read URL SEGMENT:OFFSET:LENGTH ...   prints each record, hex
    python s3_child.py write URL                             see ``write`` below

Endpoint and credentials come from the AWS variables the test set.
"""

from __future__ import annotations

import sys
import time

import orjson

from trawl.models import Location
from trawl.storage.blobs import TEXT_LOG
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


if __name__ == "__main__":
    command, url, *rest = sys.argv[1:]
    read(url, rest) if command == "read" else write(url)
