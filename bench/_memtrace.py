"""Run trawl (``python -m trawl ...``) with tracemalloc on, and write what holds the
Python heap of the process at fixed times: ``python bench/_memtrace.py OUT_DIR EVERY
-- ARGS...`` (ARGS as for ``python -m trawl``).

Every ``EVERY`` seconds a thread takes a snapshot (one frame: by line) and writes
``OUT_DIR/snap-N.txt``: the traced total and the 60 largest holders by line and by file;
each snapshot after the first also gets the 60 largest growths against the first one
(``compare_to``), which is what grows with the crawl. Native memory (SQLite's page
cache, tantivy's writer heap, lexbor, zstd/gzip state) is not traced: the bench's RSS
minus the traced total is that.
"""

from __future__ import annotations

import runpy
import sys
import threading
import time
import tracemalloc
from pathlib import Path

FRAMES = 1  # more frames cost far more CPU (10: a crawl 20 times slower)
TOP = 60


def _write(path: Path, snap: tracemalloc.Snapshot, first: tracemalloc.Snapshot | None) -> None:
    snap = snap.filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    stats = snap.statistics("lineno")
    total = sum(s.size for s in stats)
    lines = [f"traced {total / 2**20:.1f} MiB in {sum(s.count for s in stats):,} blocks", ""]
    lines += [f"{s.size / 2**20:8.2f} MiB {s.count:9,}  {s.traceback}" for s in stats[:TOP]]
    lines += ["", "by file:"]
    lines += [
        f"{s.size / 2**20:8.2f} MiB {s.count:9,}  {s.traceback}"
        for s in snap.statistics("filename")[:TOP]
    ]
    if first is not None:
        lines += ["", "grown since the first snapshot:"]
        for d in snap.compare_to(first, "lineno")[:TOP]:
            lines.append(f"{d.size_diff / 2**20:+8.2f} MiB {d.count_diff:+9,}  {d.traceback}")
    path.write_text("\n".join(lines) + "\n")


def _snapshots(out: Path, every: float) -> None:
    first: tracemalloc.Snapshot | None = None
    n = 0
    while True:
        time.sleep(every)
        snap = tracemalloc.take_snapshot()
        n += 1
        _write(out / f"snap-{n}.txt", snap, first)
        if first is None:
            first = snap


def main() -> None:
    out, every = Path(sys.argv[1]), float(sys.argv[2])
    if sys.argv[3] != "--":
        raise SystemExit("usage: _memtrace.py OUT_DIR EVERY -- ARGS...")
    out.mkdir(parents=True, exist_ok=True)
    tracemalloc.start(FRAMES)
    threading.Thread(target=_snapshots, args=(out, every), daemon=True).start()
    sys.argv = ["trawl", *sys.argv[4:]]
    runpy.run_module("trawl", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
