"""Priorities: how soon a crawl fetches the pages many pages link to, OPIC against depth.

Run with ``.venv/bin/python bench/bench_priority.py [--hosts 20] [--sections 5]
[--articles 20] [--budget 1.0] [--keep]``. Both crawls run in this one run, one after
the other, on the same web and machine.

The web: ``trawl.testing.rankweb.RankWeb`` written as static files and served by our
own nginx (``bench_crawl.Nginx``, 127.0.0.1 only) with an access log of every request
and its timing. Each host has a home page, sections, articles and the articles'
extra pages (comments, print views), and a few guide pages that every article links
some of: the important pages, linked from many pages but only from articles, so that
breadth-first order meets them at depth 3 among the far more numerous extras.

The crawls: ``trawl crawl --priority opic`` (the default) and ``--priority depth``,
otherwise as bench_crawl runs trawl (delay 0, every home page a seed, scope the
hosts, parse workers, WARC, the SQLite frontier with fsync), each under bench_crawl's
measuring process (CPU of the whole process tree). ``--budget F`` stops each crawl
after that share of the web's pages (``--max-pages``).

Figures, from the access log (requests by the time they started; robots.txt aside):
for each order, the fetches and the seconds from the first request until 50 % and
90 % of the guide pages were fetched, the ratio of depth order's to OPIC's, and the
CPU-seconds per 1,000 pages of each crawl. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script

from bench import bench_crawl
from trawl.testing.rankweb import RankWeb

MODES = ("opic", "depth")
SHARES = (0.5, 0.9)


@dataclass
class Site:
    web: RankWeb
    port: int
    sites: Path  # nginx server blocks
    seeds: Path
    resolve: Path


@dataclass
class Order:
    mode: str
    fetches: int  # page requests (robots.txt aside)
    wall: float
    cpu: float
    reached: dict[float, tuple[int, float] | None]  # share -> (fetches, seconds) or None


def build(root: Path, args: argparse.Namespace) -> Site:
    web = RankWeb(
        args.hosts,
        sections=args.sections,
        articles=args.articles,
        important=args.guides,
        links_to_important=args.links_to_guides,
        seed=args.seed,
    )
    port = bench_crawl.free_port()
    sites = web.write_static(root / "web", port=port)
    for d in (root, root / "web"):
        d.chmod(0o755)  # nginx workers run as another user unless we are root
    seeds, resolve = root / "seeds.txt", root / "hosts.map"
    seeds.write_text("".join(s + "\n" for s in web.seeds(port=port)))
    resolve.write_text("".join(f"{h}={bench_crawl.LOOPBACK}\n" for h in web.hosts))
    return Site(web, port, sites, seeds, resolve)


def crawl_cmd(web: RankWeb, data: Path, seeds: Path, resolve: Path, *extra: str) -> list[str]:
    cmd = [sys.executable, "-m", "trawl", "crawl", "--seeds", str(seeds), "--data", str(data)]
    cmd += ["--delay", "0", "--allow-network", "127.0.0.0/8", "--resolve-file", str(resolve)]
    cmd += ["--scope", "allowlist", "--quiet"]
    for host in web.hosts:
        cmd += ["--allow-host", host]
    return [*cmd, *extra]


def requests(log: Path) -> list[tuple[float, str, str]]:
    """(start time, host, path) of every page request, in the order they started."""
    out = []
    for line in log.read_text().splitlines():
        host, msec, took, _status, uri, *_ = line.split("\t")
        path = uri.split("?", 1)[0]
        if path != "/robots.txt":
            out.append((float(msec) - float(took), host, path))
    return sorted(out)


def run(mode: str, site: Site, work: Path, args: argparse.Namespace) -> Order:
    web = site.web
    total = len(web.hosts) * len(web.paths())
    extra = ["--priority", mode]
    if args.budget < 1:
        extra += ["--max-pages", str(max(1, int(total * args.budget)))]
    cmd = crawl_cmd(web, work / f"data-{mode}", site.seeds, site.resolve, *extra)
    shown = [a for a in cmd if a != "--allow-host" and a not in web.hosts]
    print(f"\n$ {' '.join(shown)} --allow-host HOST (every host)", flush=True)
    nginx = bench_crawl.Nginx(work / f"nginx-{mode}", site.sites, site.port, log=True, hold=False)
    with nginx:
        m = bench_crawl.measure(cmd, work, f"trawl-{mode}")
    log = requests(nginx.access_log)
    important = {(h, g) for h in web.hosts for g in web.paths() if g.startswith("/guide/")}
    t0 = log[0][0] if log else 0.0
    reached: dict[float, tuple[int, float] | None] = dict.fromkeys(SHARES)
    found = 0
    for i, (at, host, path) in enumerate(log, 1):
        if (host, path) in important:
            found += 1
            for share in SHARES:
                if reached[share] is None and found >= share * len(important):
                    reached[share] = (i, at - t0)
    return Order(mode, len(log), m.wall, m.cpu, reached)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--hosts", type=int, default=20)
    p.add_argument("--sections", type=int, default=5, help="sections per host")
    p.add_argument("--articles", type=int, default=20, help="articles per section")
    p.add_argument("--guides", type=int, default=5, help="important pages per host")
    p.add_argument("--links-to-guides", type=int, default=2, help="guides each article links")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--budget", type=float, default=1.0, help="share of the web to fetch")
    p.add_argument("--keep", action="store_true", help="keep the web and the crawls")
    args = p.parse_args(argv)
    bench_crawl.ensure_nginx()
    work = Path(tempfile.mkdtemp(prefix="trawl-priority-"))
    try:
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"machine: {os.cpu_count()} cores, load average {load}")
        site = build(work, args)
        web = site.web
        linked = args.sections * args.articles * args.links_to_guides // args.guides
        print(
            f"web: {args.hosts} hosts x {len(web.paths())} pages, {args.guides} guides each "
            f"(each linked from {linked} articles on average); breadth-first order fetches "
            f"{web.before_important()} pages of a host before the guides' depth"
        )
        orders = [run(mode, site, work, args) for mode in MODES]
        print()
        for o in orders:
            parts = []
            for share in SHARES:
                got = o.reached[share]
                when = (
                    "not within the budget"
                    if got is None
                    else f"{got[0]:,} fetches, {got[1]:.1f} s"
                )
                parts.append(f"{share:.0%} of the guides after {when}")
            print(
                f"{o.mode:>5}: {'; '.join(parts)}; {o.fetches:,} fetches in {o.wall:.1f} s, "
                f"{1000 * o.cpu / max(1, o.fetches):.2f} CPU s / 1,000 pages"
            )
        opic, depth = orders
        for share in SHARES:
            a, b = opic.reached[share], depth.reached[share]
            if a is not None and b is not None:
                print(
                    f"{share:.0%} of the guides: depth order needs {b[0] / a[0]:.1f}x the "
                    f"fetches and {b[1] / max(a[1], 1e-9):.1f}x the time of OPIC"
                )
        print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
