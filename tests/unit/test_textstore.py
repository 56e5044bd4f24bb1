"""Text records: one gzip member per JSON line, readable at every moment."""

from __future__ import annotations

import gzip
from pathlib import Path

from trawl.archive.textstore import TextStore, read_text_files
from trawl.storage.local.segments import SegmentLog


def test_append_read_and_zcat_compatible(tmp_path: Path) -> None:
    log = SegmentLog(tmp_path, prefix="trawl", suffix=".jsonl.gz", max_bytes=400, committed=None)
    store = TextStore(log)
    locations = [store.append({"id": i, "text": "word " * 50}) for i in range(10)]
    assert store.read(locations[3])["id"] == 3
    committed = log.sync()
    assert len(log.files()) > 1  # rotated
    lines = []
    for f in log.files():
        lines += gzip.decompress(f.read_bytes()).splitlines()
    assert len(lines) == 10
    log.sync()
    assert [r["id"] for r in read_text_files(log.files())] == list(range(10))
    store.append({"id": 99, "text": "lost in the crash"})
    log.close()
    reopened = SegmentLog(
        tmp_path, prefix="trawl", suffix=".jsonl.gz", max_bytes=400, committed=committed
    )
    assert [r["id"] for r in read_text_files(reopened.files())] == list(range(10))
    reopened.close()
