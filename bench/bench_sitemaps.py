"""Sitemaps as a URL source: sitemap-only pages found, and what sitemaps cost.

Run with ``.venv/bin/python bench/bench_sitemaps.py [--hosts 24] [--pages 60]
[--hidden 5] [--seed 2]``. The web: ``SampleWeb(hosts, pages, seed, sitemap_only=hidden)``
written as static files and served by our own nginx (``bench_crawl.Nginx``): on each
host ``hidden`` of its ``pages`` pages are linked from nowhere and listed only in its
sitemaps (robots.txt -> /sitemap.xml, an index -> a gzip'd urlset of the linked pages
with lastmod dates, and a text file of the hidden ones). The host with Crawl-delay 2 is
left out, as in bench_crawl.

trawl crawls it ``--rounds`` times each way (alternating), ``--delay 0``, each under
bench_crawl's measuring process (the exact CPU of the whole process tree): with
sitemaps (the default) and with ``--no-sitemaps``. Printed: sitemap-only pages found /
total for each crawl, with its CPU-seconds per 1,000 pages; the requests for sitemap
files and the URLs sitemaps discovered (new to the frontier), with requests per URL
discovered; and the CPU of the sitemap work itself, measured apart in this process:
every sitemap response of the crawl's WARC parsed again (``parse_sitemap``) and its
URLs admitted into a fresh SQLite store (``Admission``), per URL discovered. Figures
are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench import bench_crawl  # noqa: E402


def build(
    root: Path, hosts: int, pages: int, hidden: int, seed: int
) -> tuple[bench_crawl.Web, list[str]]:
    from trawl.testing.sampleweb import SampleWeb

    sample = SampleWeb(hosts, pages, seed, sitemap_only=hidden)
    scope = [h for h in sample.hosts if not sample.plan(h).crawl_delay]
    port = bench_crawl.free_port()
    root.mkdir(parents=True, exist_ok=True)
    sites_conf = sample.write_static(root / "web", port=port)
    for d in (root, root / "web"):
        d.chmod(0o755)
    seeds, hosts_file, resolve = root / "seeds.txt", root / "hosts.txt", root / "hosts.map"
    seeds.write_text("".join(sample.url(h, "/", port=port) + "\n" for h in scope))
    hosts_file.write_text("".join(h + "\n" for h in scope))
    resolve.write_text("".join(f"{h}={bench_crawl.LOOPBACK}\n" for h in sample.hosts))
    urls = {sample.url(h, p, port=port) for h in scope for p in sample.plan(h).pages}
    web = bench_crawl.Web(
        root, port, scope, {}, {}, urls, 0, seeds, hosts_file, resolve, sites_conf
    )
    only = [
        u for u in sample.sitemap_only_urls(port=port) if u.split("/")[2].split(":")[0] in scope
    ]
    return web, only


Crawled = tuple[bench_crawl.Measured, dict[str, Any], dict[str, tuple[str, str]]]


def crawl(web: bench_crawl.Web, work: Path, name: str, *extra: str) -> Crawled:
    data = work / name
    cmd = bench_crawl.trawl_cmd(web, data, *extra)
    print(f"$ {bench_crawl.show_cmd(cmd)}", flush=True)
    m = bench_crawl.measure(cmd, work, name)
    stats, states = bench_crawl.trawl_stats(data)
    return m, stats, states


def sitemap_cpu(data: Path) -> tuple[float, float, int, int, int]:
    """(parse s, admit s, files, URLs listed, URLs new) of the crawl's sitemap responses."""
    from warcio.archiveiterator import ArchiveIterator

    from trawl.frontier.admission import Admission, Candidate
    from trawl.frontier.sitemaps import ENTRY_DEPTH, SitemapLedger, SitemapRef, lastmod_priority
    from trawl.frontier.traps import ScopeFilter, TrapLimits
    from trawl.parse.sitemap import SitemapInput, parse_sitemap
    from trawl.storage.open import open_store

    bodies: list[tuple[str, bytes]] = []
    for f in sorted((data / "warc").glob("*.warc.gz")):
        with f.open("rb") as stream:
            for record in ArchiveIterator(stream):
                uri = record.rec_headers.get_header("WARC-Target-URI") or ""
                if (
                    record.rec_type == "response"
                    and "/sitemap" in uri
                    and record.http_headers.get_statuscode() == "200"
                ):
                    bodies.append((uri, record.content_stream().read()))
    started = time.process_time()
    parsed = []
    for uri, body in bodies:
        origin = uri.split("/", 3)
        parsed.append(parse_sitemap(SitemapInput(uri, body, grant="/".join(origin[:3]))))
    parse_s = time.process_time() - started
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp), max_per_host=None)
        admission = Admission(
            frontier=store.frontier,
            scope=ScopeFilter("any"),
            limits=TrapLimits(),
            counters=store.counters,
            sitemaps=SitemapLedger(store.origin_files, cap=200),
        )
        now = time.time()
        started = time.process_time()
        new = listed = 0
        for p in parsed:
            listed += len(p.urls)
            for start in range(0, len(p.urls), 500):
                chunk = p.urls[start : start + 500]
                cands = [
                    Candidate(e.url, ENTRY_DEPTH, priority=lastmod_priority(e.lastmod, now))
                    for e in chunk
                ]
                new += len(admission.offer(cands, now=now).added)
            admission.offer_sitemaps(
                [(SitemapRef(e.url).child(e.url), 1) for e in p.sitemaps], now=now
            )
            store.commit()
        admit_s = time.process_time() - started
        store.close()
    return parse_s, admit_s, len(bodies), listed, new


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--hosts", type=int, default=24)
    p.add_argument("--pages", type=int, default=60, help="pages per host")
    p.add_argument("--hidden", type=int, default=5, help="sitemap-only pages per host")
    p.add_argument("--seed", type=int, default=2)
    p.add_argument("--rounds", type=int, default=2, help="crawls of each kind, alternating")
    p.add_argument("--keep", action="store_true")
    args = p.parse_args(argv)
    bench_crawl.ensure_nginx()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} cores, load average {load}")
    work = Path(tempfile.mkdtemp(prefix="trawl-sitemaps-"))
    try:
        web, only = build(work, args.hosts, args.pages, args.hidden, args.seed)
        print(
            f"web: {len(web.hosts)} hosts x {args.pages} pages, {args.hidden} per host "
            f"linked from nowhere ({len(only)} sitemap-only pages)"
        )
        runs: dict[str, list[Crawled]] = {"sitemaps on": [], "sitemaps off": []}
        with bench_crawl.Nginx(work / "nginx", web.sites_conf, web.port):
            for round_ in range(args.rounds):  # alternating, so drift hits both
                order = ["sitemaps on", "sitemaps off"][:: 1 if round_ % 2 == 0 else -1]
                for name in order:
                    extra = () if name == "sitemaps on" else ("--no-sitemaps",)
                    runs[name].append(
                        crawl(web, work, f"{name.replace(' ', '-')}-{round_}", *extra)
                    )
        for name, results in runs.items():
            for m, stats, states in results:
                found = sum(states.get(u, ("", ""))[0] == "parsed" for u in only)
                pages = stats["counters"].get("fetch:stored", 0)
                print(
                    f"{name:13} sitemap-only pages found {found}/{len(only)}; pages stored "
                    f"{pages:,}; {m.cpu:.1f} CPU-s, {m.cpu / max(1, pages) * 1000:.2f} CPU-s "
                    f"per 1,000 pages; wall {m.wall:.1f} s"
                )
        on = runs["sitemaps on"][0]
        _m, stats, states = on
        counters = stats["counters"]
        files = sum("#sitemap" in u for u in states)
        new = counters.get("sitemap:urls new", 0)
        print(
            f"sitemap files requested {files} ({files / len(web.hosts):.1f} per host); URLs "
            f"listed {counters.get('sitemap:urls listed', 0):,}, new to the frontier {new:,}; "
            f"{files / max(1, new):.3f} sitemap requests per URL discovered"
        )
        parse_s, admit_s, n, listed, fresh = sitemap_cpu(work / "sitemaps-on-0")
        per = (parse_s + admit_s) / max(1, fresh) * 1e6
        print(
            f"sitemap CPU (apart, this process): {n} files, {listed:,} URLs: parse "
            f"{parse_s * 1000:.0f} ms + admit {admit_s * 1000:.0f} ms = {per:.0f} us per "
            f"URL discovered ({fresh:,})"
        )
        return 0
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
