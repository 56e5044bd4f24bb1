"""Where a crawl's CPU goes: per stage and per library, against each library's floor.

Run with ``.venv/bin/python bench/bench_profile.py [--hosts 60] [--pages 60] [--seed 1]
[--rate 100] [--keep]`` (``--help`` for the rest), or ``python -m bench profile``.

One crawl of bench_crawl's local web (``SampleWeb`` served by our own nginx on
loopback, the same seeds, scope and flags as bench_crawl: every feature on, i.e. the
defaults: WARC, main text, language, exact and near duplicates, link graph, URL
equivalences, sitemaps, OPIC priorities, the search index) runs under py-spy
(``record --subprocesses --native``: Python and native frames of the crawl process
and its parse workers, sampled from outside the process, idle threads left out),
itself under bench_crawl's measuring process (exact CPU of the process tree; the
split by process and, in the crawl process, by thread, from psutil samples). The
profile is of the real crawl, not of a re-enactment.

Each sample is put in one *stage* (the innermost frame that names one: the HTTP
client, WARC, parse, extraction, language, MinHash, SQLite, the index, the logs, URL
admission, the run loop ...) and one *library* (the leaf frame: a native library such
as lexbor, libz, SQLite or the Python code of a package). A process's samples share
its measured CPU (py-spy counts a runnable thread waiting for a core as busy, so
counts are shares, not seconds); native threads py-spy does not see (tantivy's
indexing threads) are rows of their own from their measured CPU. Figures are
CPU-milliseconds per page (pages = HTTP 200 HTML responses).

Floors: the same bodies (read back from the crawl's WARC) and texts (from its text
store) through the bare library call, timed here with ``time.process_time``: a Lexbor
parse, a gzip member (ISA-L at the WARC's level, and zlib), a pycld2 detection, a
tantivy add, an orjson dump, a UTF-8 decode, an aiohttp GET of the same URLs on the
same nginx. A stage far above its floor is where trawl's own code costs.

Then a second crawl of the same web, not under py-spy, times each SQLite statement of
the crawl process (``bench/_sqlstats.py``; ``--skip-sql``: not): SQLite is one stage of
the profile, and this says which statements make it.

Figures are printed, never asserted. Pass ``--raw FILE --measured FILE --pages-count
N`` to re-analyse an earlier run's py-spy output without crawling.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script

from bench import bench_crawl
from bench._floors import floors
from bench._sqlstats import sql_profile

# -- where a sample belongs ------------------------------------------------------------

# Stage rules, tried from the innermost frame outwards: the first frame that matches
# a rule names the stage. A frame is "func (file)"; patterns are searched in it.
STAGES: list[tuple[str, str]] = [
    # parse worker steps
    ("language id", r"trawl/parse/language\.py|pycld2"),
    ("MinHash", r"trawl/dedup/(minhash|shingles)\.py"),
    ("extraction", r"trawl/parse/(extract|_extract_\w+)\.py"),
    ("quality signals", r"trawl/parse/quality\.py"),
    ("links (join, anchors)", r"_links \(|_anchor \(|_base_url \("),
    ("charset, decode", r"trawl/parse/charset\.py|cchardet"),
    ("text hash", r"text_hash \("),
    ("directives, metas", r"trawl/parse/(directives|tdm)\.py|_metas \("),
    ("parse (Lexbor)", r"parse_html \(|selectolax/lexbor"),
    ("parse_page (rest)", r"trawl/parse/page\.py"),
    ("sitemaps", r"trawl/(parse|fetch|frontier)/(sitemap|_sitemap)\w*\.py"),
    # the crawl process
    ("gzip (WARC, text records)", r"trawl/archive/gz\.py"),
    ("WARC records", r"trawl/archive/warc\.py|warcio/"),
    ("text log", r"trawl/archive/textstore\.py"),
    ("event log", r"trawl/archive/events\.py"),
    ("link log", r"trawl/archive/links\.py"),
    ("index (tantivy)", r"trawl/index/"),
    ("near dedup", r"trawl/dedup/near\.py|trawl/storage/sqlite/near\.py"),
    ("URL equivalences", r"trawl/frontier/equivalences\.py|trawl/dedup/urlrules\.py"),
    ("URL normalise", r"trawl/urls\.py|can_ada"),
    ("URL admission", r"trawl/frontier/(admission|traps|shape)\.py"),
    ("priorities (OPIC)", r"trawl/frontier/priority\.py|trawl/ranking\.py"),
    ("host dups, revisits", r"trawl/dedup/hostdups\.py|trawl/frontier/revisit\.py"),
    ("SQLite", r"trawl/storage/sqlite/|sqlite3|libsqlite"),
    ("commit (logs, fsync)", r"trawl/storage/(gate|local)|trawl/storage/blobs\.py"),
    ("parse stage (apply)", r"trawl/parse/(stage|role|sitemap_stage)\.py"),
    ("robots", r"trawl/fetch/(robots|_robots)\w*\.py"),
    ("politeness, host gate", r"trawl/fetch/(politeness|hostgate)\.py|trawl/storage/leases"),
    ("HTTP decoding", r"trawl/fetch/_http_(decode|zstd)\.py"),
    ("HTTP client", r"trawl/fetch/(http|dns|address|sendcheck)\.py|aiohttp|multidict|yarl"),
    ("fetch stage", r"trawl/fetch/(stage|role)\.py"),
    ("schedule", r"trawl/storage/schedule\.py|trawl/frontier/"),
    (
        "parse pool, pickling",
        r"trawl/parse/(pool|worker)\.py|concurrent/futures|multiprocessing|pickle",
    ),
    ("run loop", r"trawl/crawl\.py|asyncio/"),
    ("start-up (imports)", r"<module> \(|importlib"),
]
_STAGE_RES = [(name, re.compile(pattern)) for name, pattern in STAGES]

# Libraries, by the leaf frame (native code by its shared object).
LIBRARIES: list[tuple[str, str]] = [
    ("lexbor (selectolax)", r"selectolax/"),
    ("ISA-L (igzip)", r"isal|igzip"),
    ("zlib", r"libz\.|zlib"),
    ("SQLite", r"sqlite"),
    ("tantivy", r"tantivy"),
    ("pycld2", r"pycld2|cld2"),
    ("can_ada (URLs)", r"can_ada"),
    ("cchardet", r"cchardet"),
    ("numpy", r"numpy"),
    ("xxhash", r"xxhash"),
    ("orjson", r"orjson"),
    ("zstandard", r"zstandard|zstd"),
    ("OpenSSL (hashes)", r"libcrypto|_hashlib|sha256|blake2"),
    ("warcio", r"warcio/"),
    ("aiohttp", r"aiohttp/|multidict|yarl|propcache"),
    ("asyncio", r"asyncio/|_asyncio|selectors\.py"),
    ("pickle, multiprocessing", r"pickle|multiprocessing/|concurrent/futures"),
    ("kernel (syscalls)", r"\[vdso\]|^(write|read|send|recv|epoll|fsync|fdatasync|pwrite)"),
    ("libc (malloc, memcpy)", r"libc\.so|libm\.so"),
    ("trawl (Python)", r"trawl/"),
    ("CPython interpreter", r"libpython|python3|\(python\)"),
    ("Python stdlib", r"lib/python3\.\d+/|<frozen"),
]
_LIB_RES = [(name, re.compile(pattern)) for name, pattern in LIBRARIES]
_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*)\)$")
# A thread blocked in one of these is off the CPU. py-spy's own idle test misses them
# with --native (a wait shows as a libc frame): such samples are left out.
_WAITING = re.compile(
    r"^(PyThread_acquire_lock_timed|pthread_cond_(timed)?wait|sem_(timed|clock)?wait|"
    r"poll|epoll_wait|select|__futex\w*|futex_\w*|(clock_)?nanosleep|"
    r"_RNv\w*Thread4join|take_gil|_multiprocessing_SemLock_acquire\w*) "
)
# A read or write of the parse pool's pipes: blocked (a worker waiting for a page, the
# pool waiting for a worker to read one) nearly always, since copying a page's 50 KB
# takes some 10 µs: left out too.
_PIPE_WAIT = re.compile(r"Connection\._(send|recv) .*;os_(write|read) .*;(write|read) \(")
# The same for a parse worker on its socket (parse/pool.py): blocked in recv, waiting
# for its next page.
_SOCKET_WAIT = re.compile(
    r"_read_exact \(trawl/parse/worker\.py:\d+\);sock_recv_into .*;recv \([^;]*$"
)


def stage_of(frames: Sequence[str]) -> str:
    for frame in reversed(frames):
        for name, pattern in _STAGE_RES:
            if pattern.search(frame):
                return name
    return "other"


def library_of(leaf: str) -> str:
    for name, pattern in _LIB_RES:
        if pattern.search(leaf):
            return name
    match = _FRAME.match(leaf)
    return f"other: {match['file'].split(':')[0] if match else leaf}"[:40]


@dataclass
class Samples:
    """py-spy's samples of one process kind, by stage and by library."""

    total: int = 0
    idle: int = 0  # left out: waiting (a lock, a condition, poll) with --native
    stages: Counter[str] | None = None
    libraries: Counter[str] | None = None
    stage_lib: Counter[tuple[str, str]] | None = None

    def add(self, frames: Sequence[str], count: int) -> None:
        if self.stages is None or self.libraries is None or self.stage_lib is None:
            self.stages, self.libraries, self.stage_lib = Counter(), Counter(), Counter()
        stage, lib = stage_of(frames), library_of(frames[-1])
        self.total += count
        self.stages[stage] += count
        self.libraries[lib] += count
        self.stage_lib[(stage, lib)] += count


def read_raw(raw: Path) -> dict[str, Samples]:
    """py-spy's raw output ("frame;frame;... count" per line) by process kind."""
    out: dict[str, Samples] = defaultdict(Samples)
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        process, frames = bench_crawl.split_stack(stack)
        kind = bench_crawl.process_kind(process, frames)
        if (
            any(_WAITING.match(f) for f in frames[-8:])
            or _PIPE_WAIT.search(";".join(frames[-3:]))
            or _SOCKET_WAIT.search(";".join(frames[-9:]))
        ):
            out[kind].idle += int(count)
            continue
        if not frames:
            frames = ["(no frame)"]
        out[kind].add(frames, int(count))
    return out


# -- the table -------------------------------------------------------------------------


def rows_of(
    counts: Counter[str], total: int, cpu: float, pages: int, floors: dict[str, float]
) -> list[tuple[str, str, str, str]]:
    """(name, ms/page, share, floor ms/page) rows, largest first."""
    out = []
    for name, n in counts.most_common():
        ms = 1000 * cpu * n / max(1, total) / max(1, pages)
        floor = floors.get(name)
        out.append(
            (
                name,
                f"{ms:7.3f}",
                f"{100 * n / max(1, total):5.1f} %",
                "" if floor is None else f"{floor:7.3f}",
            )
        )
    return out


def print_table(title: str, rows: Iterable[tuple[str, str, str, str]]) -> None:
    rows = [("", "ms/page", "share", "floor ms/page"), *rows]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    print(title)
    for r in rows:
        print(
            "  "
            + "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
        )


def crawl_under_spy(web: bench_crawl.Web, work: Path, rate: int) -> tuple[Path, Path, Path]:
    spy = Path(sys.executable).parent / "py-spy"
    if not spy.exists():
        raise SystemExit("py-spy not installed in this venv (make setup installs it)")
    raw = work / "profile.raw"
    data = work / "trawl-data"
    cmd = bench_crawl.trawl_cmd(web, data, "--max-duration", "1800")
    spy_cmd = [str(spy), "record", "--subprocesses", "--native", "--format", "raw"]
    spy_cmd += ["--rate", str(rate), "--output", str(raw), "--", *cmd]
    print(f"$ {bench_crawl.show_cmd(spy_cmd)}", flush=True)
    m = bench_crawl.measure(spy_cmd, work, "profile")
    if m.rc != 0:
        raise SystemExit(f"the profiled crawl exited {m.rc}")
    return raw, work / "profile.measure.json", data


def _second(kv: tuple[str, float]) -> float:
    return -kv[1]


def report(raw: Path, measured: dict[str, Any], pages: int, floor: dict[str, float]) -> None:
    kinds = read_raw(raw)
    roles: dict[str, float] = measured["sampled_cpu_by_role"]
    threads: dict[str, float] = measured.get("crawler_threads") or {}
    tree = measured["cpu"] - roles.get("profiler", 0.0)
    print(
        f"\nCPU of the crawl: {tree:.1f} s for {pages:,} pages = {1000 * tree / pages:.2f} CPU-s "
        f"per 1,000 pages (process tree {measured['cpu']:.1f} s, py-spy's own "
        f"{roles.get('profiler', 0.0):.1f} s left out; by process from psutil samples: "
        + ", ".join(f"{k} {v:.1f} s" for k, v in sorted(roles.items(), key=lambda kv: -kv[1]))
        + ")"
    )
    crawler_cpu = roles.get("crawler", 0.0)
    py_name = max(threads, key=lambda k: threads[k], default="")  # the main thread's name
    native = {k: v for k, v in threads.items() if k != py_name and v >= 0.05}
    python_cpu = crawler_cpu - sum(native.values())
    print(
        "crawler threads (psutil): "
        + ", ".join(
            f"{k or '?'} {v:.1f} s" for k, v in sorted(threads.items(), key=lambda kv: -kv[1])
        )
    )
    for kind, cpu in (("crawler", python_cpu), ("parse worker", roles.get("parse worker", 0.0))):
        s = kinds.get(kind)
        if s is None or s.stages is None or s.libraries is None:
            print(f"\n{kind}: no samples")
            continue
        print(
            f"\n== {kind}: {1000 * cpu / pages:.3f} CPU-ms per page in Python threads "
            f"({s.total:,} samples; {s.idle:,} more waiting, left out)"
        )
        stage_rows = rows_of(s.stages, s.total, cpu, pages, floor)
        if kind == "crawler" and native:
            for name, secs in native.items():
                stage_rows.append((f"native thread {name}", f"{1000 * secs / pages:7.3f}", "", ""))
            # The index's floor is of the adds with its indexing threads: compare the sum.
            python_ms = 1000 * cpu * s.stages["index (tantivy)"] / max(1, s.total) / pages
            total_ms = python_ms + 1000 * sum(native.values()) / pages
            floor_ms = floor.get("index (tantivy)")
            stage_rows.append(
                (
                    "= index (tantivy) with its threads",
                    f"{total_ms:7.3f}",
                    "",
                    "" if floor_ms is None else f"{floor_ms:7.3f}",
                )
            )
        print_table(f"{kind} by stage", stage_rows)
        print_table(
            f"{kind} by library (leaf frame)", rows_of(s.libraries, s.total, cpu, pages, {})
        )
        assert s.stage_lib is not None
        top = Counter({f"{st} / {lib}": n for (st, lib), n in s.stage_lib.items()})
        print_table(
            f"{kind}: top stage / library pairs", rows_of(top, s.total, cpu, pages, {})[:15]
        )
    if floor:
        print("\nfloors (bare library calls on the crawl's bodies and texts, CPU-ms per page):")
        for name, ms in floor.items():
            print(f"  {name:28s} {ms:7.3f}")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--hosts", type=int, default=60)
    p.add_argument("--pages", type=int, default=60, help="pages per host")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--page-bytes",
        type=bench_crawl.page_bytes,
        default=bench_crawl.PAGE_BYTES,
        metavar="LOW,HIGH",
        help="page sizes of the web (as bench_crawl's)",
    )
    p.add_argument("--rate", type=int, default=100, help="py-spy samples per second")
    p.add_argument("--floor-pages", type=int, default=1000, help="bodies and texts for floors")
    p.add_argument("--out", type=Path, help="work here (default: a temp dir)")
    p.add_argument("--keep", action="store_true", help="keep the web and outputs")
    p.add_argument(
        "--skip-sql", action="store_true", help="no second crawl timing each SQLite statement"
    )
    p.add_argument("--raw", type=Path, help="analyse this py-spy output (no crawl)")
    p.add_argument("--measured", type=Path, help="with --raw: its measure.json")
    p.add_argument("--pages-count", type=int, help="with --raw: pages of that crawl")
    args = p.parse_args(argv)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} cores, load average {load}; python {sys.version.split()[0]}")
    if args.raw is not None:
        if args.measured is None or args.pages_count is None:
            p.error("--raw needs --measured and --pages-count")
        report(args.raw, json.loads(args.measured.read_text()), args.pages_count, {})
        return 0
    bench_crawl.ensure_nginx()
    work = Path(tempfile.mkdtemp(prefix="trawl-profile-", dir=args.out))
    try:
        web = bench_crawl.build_web(work, args.hosts, args.pages, args.seed, sizes=args.page_bytes)
        with bench_crawl.Nginx(work / "nginx", web.sites_conf, web.port):
            raw, measured_file, data = crawl_under_spy(web, work, args.rate)
            stats, _ = bench_crawl.trawl_stats(data)
            pages = int(stats["http statuses"].get("200", 0))
            floor = floors(data, web.port, args.floor_pages)
            report(raw, json.loads(measured_file.read_text()), pages, floor)
            if not args.skip_sql:
                sql_profile(web, work)
    finally:
        if args.keep:
            print(f"\nkept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
