"""Search across crawls: 4 crawls of 25,000 pages against one index of their 100,000.

    python bench/bench_search_multi.py [--crawls 4] [--pages 25000] [--queries 300]
                                       [--keep DIR] [--duration 10] [--connections 16]
                                       [--no-http | --http-only]

The pages are generated as ``bench/bench_search.py`` generates them (its ``generate``
and ``index``: prose written as a crawl writes it, indexed through
``Indexer.index_pending``), numbered across the crawls, so that the one index
(``DIR/one``, a ``trawl crawl`` data directory) and the crawls (``DIR/many``, a
``trawl serve`` data directory holding ``--crawls`` API crawls in ``crawls/c1`` ...,
finished) hold the very same pages. Queries: ``bench_search.queries`` over samples
of every crawl (one word, several words, a phrase, a typo of a distinctive phrase).

In process, each query is timed through ``Searcher.search`` on the one index and on
the crawls (the crawls searched in parallel threads and merged as one index:
``trawl.index.gather``), uncached (no answer cache; after one untimed pass, so that
the files are in the page cache as a serving process's are), then cached (the same queries
again on a searcher that has seen them); it also checks that both put the same page
first for the typo queries. Over HTTP (unless ``--no-http``), ``trawl serve`` runs on
each directory in turn under wrk, as ``bench/bench_api.py`` runs it: one query over
and over (cached), and a rotation through every distinct query (uncached: more than
the server's cache holds), with the server process's CPU-seconds per 1,000 requests.
Figures are printed, not asserted, with the load average
before and after each part (the machine may be shared).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import quote_plus

import orjson
import psutil  # type: ignore[import-untyped]

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_api import CACHED_QUERY, LUA, start_server, stop_server
from bench.bench_search import generate, index, queries
from trawl.index import Searcher
from trawl.index.shard import IndexSpec

Sample = tuple[str, str, str]


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def _samples(path: Path) -> list[Sample]:
    lines = path.read_text().split("\x1e")
    return [(u, t, p) for u, t, p in (s.split("\x1f") for s in lines if s)]


def _build(data: Path, pages: int, first: int, total: int) -> list[Sample]:
    sample_file = data / "samples.txt"
    if (data / "index" / "meta.json").exists() and sample_file.exists():
        return _samples(sample_file)
    data.mkdir(parents=True, exist_ok=True)
    samples, _ = generate(data, pages, first=first, total=total)
    sample_file.write_text("\x1e".join("\x1f".join(s) for s in samples))
    index(data)
    return samples


def build(root: Path, crawls: int, pages: int) -> tuple[list[Sample], list[Path]]:
    """The one index and the crawls; the samples of all (reused when already built)."""
    total = crawls * pages
    print(f"== one index of {total:,} pages in {root / 'one'}", flush=True)
    samples = _build(root / "one", total, 0, total)
    dirs = []
    for k in range(crawls):
        data = root / "many" / "crawls" / f"c{k + 1}"
        print(f"== crawl c{k + 1}: pages {k * pages:,} to {(k + 1) * pages - 1:,}", flush=True)
        _build(data, pages, k * pages, total)
        # What makes it a crawl `trawl serve` holds, finished (it starts nothing).
        (data / "spec.json").write_bytes(orjson.dumps({"seeds": [], "name": f"c{k + 1}"}))
        (data / "state.json").write_bytes(orjson.dumps({"desired": "finished"}))
        dirs.append(data)
    return samples, dirs


def _pct(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def _row(label: str, ms: Sequence[float]) -> str:
    return (
        f"  {label:<28} p50 {_pct(ms, 50):6.2f}  p90 {_pct(ms, 90):6.2f}  "
        f"p99 {_pct(ms, 99):6.2f}  mean {statistics.fmean(ms):6.2f} ms"
    )


def _time(searcher: Searcher, qs: list[tuple[str, str, str | None]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for kind, q, _t in qs:
        t = time.perf_counter()
        searcher.search(q)
        out.setdefault(kind, []).append((time.perf_counter() - t) * 1000)
    return out


def in_process(root: Path, dirs: list[Path], qs: list[tuple[str, str, str | None]]) -> None:
    specs = [IndexSpec(d.name, d / "index") for d in dirs]

    def one(size: int) -> Searcher:
        return Searcher(root / "one" / "index", cache_size=size)

    def many(size: int) -> Searcher:
        return Searcher(indexes=lambda: specs, cache_size=size)

    configs: dict[str, Callable[[int], Searcher]] = {"1 index": one, f"{len(dirs)} crawls": many}
    print(f"== in process, {len(qs)} queries; {_load()}", flush=True)
    firsts: dict[str, list[str | None]] = {}
    for label, make in configs.items():
        cold = make(0)
        _time(cold, qs)  # the page cache warm, as a serving process's is
        uncached = _time(cold, qs)
        firsts[label] = [
            (r.results[0].link if r.results else None)
            for r in (cold.search(q) for _k, q, t in qs if t is not None)
        ]
        every = [t for ts in uncached.values() for t in ts]
        print(_row(f"{label}, uncached", every))
        for kind, ts in sorted(uncached.items()):
            print(_row(f"  {kind}", ts))
        cold.close()
        warm = make(len(qs) * 2)
        _time(warm, qs)
        cached = _time(warm, qs)
        print(_row(f"{label}, cached", [t for ts in cached.values() for t in ts]))
        warm.close()
    first_one, first_many = firsts.values()
    same = sum(a == b for a, b in zip(first_one, first_many, strict=True))
    typos = [t for _k, _q, t in qs if t is not None]
    right = sum(a == t for a, t in zip(first_many, typos, strict=True))
    print(
        f"  typo queries: the same page first in both {same}/{len(first_one)}; "
        f"the page meant first across crawls {right}/{len(typos)}; {_load()}",
        flush=True,
    )


def _cpu(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def _wrk(label: str, url: str, args: argparse.Namespace, script: Path | None, server: int) -> None:
    cmd = ["wrk", "-t1", f"-c{args.connections}", f"-d{args.duration}s", "--latency"]
    if script is not None:
        cmd += ["-s", str(script)]
    cmd.append(url)
    cpu = _cpu(server)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    cpu = _cpu(server) - cpu

    def grab(pattern: str) -> str:
        m = re.search(pattern, out, re.M)
        return m.group(1) if m else "?"

    rps = grab(r"Requests/sec:\s+([\d.]+)")
    done = int(grab(r"^\s+(\d+) requests in") or 0)
    p50, p90, p99 = (grab(rf"^\s+{p}%\s+(\S+)") for p in (50, 90, 99))
    bad = grab(r"Non-2xx or 3xx responses:\s+(\d+)") if "Non-2xx" in out else "0"
    per = f"{cpu / done * 1000:5.2f}" if done else "?"
    print(
        f"  {label:<28} {rps:>10} req/s  p50 {p50:>8}  p90 {p90:>8}  p99 {p99:>8}  "
        f"non-2xx {bad}  server {per} CPU-s per 1,000 requests",
        flush=True,
    )


def over_http(
    root: Path, qs: list[tuple[str, str, str | None]], args: argparse.Namespace, tmp: Path
) -> None:
    distinct = sorted({q for _kind, q, _t in qs})
    paths = tmp / "paths.txt"
    paths.write_text("".join(f"/api/v1/search?query={quote_plus(q)}\n" for q in distinct))
    script = tmp / "rotate.lua"
    script.write_text(LUA % paths)
    print(
        f"== over HTTP: trawl serve under wrk -t1 -c{args.connections} -d{args.duration}s "
        f"({len(distinct):,} distinct queries uncached); {_load()}",
        flush=True,
    )
    for label, data in (("1 index", root / "one"), (f"{args.crawls} crawls", root / "many")):
        proc, base = start_server(data)
        try:
            cached = f"{base}api/v1/search?query={quote_plus(CACHED_QUERY)}"
            subprocess.run(["curl", "-s", "-o", "/dev/null", cached], check=False)
            _wrk(f"{label}, cached", cached, args, None, proc.pid)
            _wrk(f"{label}, uncached", base.rstrip("/"), args, script, proc.pid)
        finally:
            stop_server(proc)
    print(f"  {_load()}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--crawls", type=int, default=4)
    ap.add_argument("--pages", type=int, default=25_000, help="pages per crawl")
    ap.add_argument("--queries", type=int, default=300, help="of each kind")
    ap.add_argument("--keep", type=Path, help="build in DIR and keep it (reused if there)")
    ap.add_argument("--duration", type=int, default=10, help="seconds of each wrk run")
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--no-http", action="store_true", help="in process only (no wrk)")
    ap.add_argument("--http-only", action="store_true", help="over HTTP only")
    args = ap.parse_args()
    http = not args.no_http and shutil.which("wrk") is not None
    tmp = Path(tempfile.mkdtemp(prefix="trawl-bench-multi-"))
    root = args.keep or tmp
    try:
        samples, dirs = build(root, args.crawls, args.pages)
        qs = queries(samples, args.queries, random.Random(5))
        if not args.http_only:
            in_process(root, dirs, qs)
        if http:
            over_http(root, qs, args, tmp)
        elif not args.no_http:
            print("over HTTP: skipped (no wrk; make bench installs it)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
