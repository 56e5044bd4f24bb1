"""URL hygiene: successful fetches per distinct page, before (main) and after, one run.

Run with ``.venv/bin/python bench/bench_urlhygiene.py [--before REF] [--after REF]
[--skip-before] [--campaign-hosts 250 --campaign-pages 48] [--hosts 12 --pages 300]
[--plain-hosts N] [--keep]`` (``--help`` for the rest).

Two webs of ``trawl.testing.spellingweb`` (SampleWeb's pages, links respelled), written
as static files and served by our own nginx on 127.0.0.1 (bench_crawl's ``Nginx``,
access log on, no response held back):

- the campaign web: about one link in three carries campaign tags (``utm_*``,
  ``gclid``, ``fbclid``, ``msclkid``, ``mc_cid``/``mc_eid``);
- the spelling web: every page linked under three or more spellings (each host its
  own: a ``ref`` parameter, a ``sessionid`` on one host in three, campaign tags, two
  of no trailing slash, ``index.html``, ``/amp/``, ``/print/``), rel=canonical on every
  other host, and on one host in five pages a parameter chooses (``/listing/?page=N``,
  ``/item?id=N``).

With ``--plain-hosts N``, SampleWeb itself (N hosts, no spelling at all) is crawled
too, as a control: the same fetches before and after, so its CPU per page shows what
the hygiene costs where there is nothing to learn.

Each is crawled by ``trawl crawl --delay 0`` (seeds: every home page; scope: those
hosts; the one host asking ``Crawl-delay: 2`` is left out, as in bench_crawl) with the
code of ``--before`` (default ``main``, exported with ``git archive`` and put first
on ``PYTHONPATH``) and with this checkout's (or ``--after``'s, exported the same way,
so the checkout may change while the benchmark runs); the spelling web also with
``--no-equivalences`` (tracking parameters dropped, nothing learned). From nginx's
access log: HTTP 200 answers to page requests (robots.txt left out) divided by the
distinct pages of the web in scope (``SpellingWeb.page_of`` maps every spelling to
its page), and the distinct pages no 200 answer served (missed). Also every request (404s included),
wall time and the crawl's CPU (its whole process tree, bench_crawl's ``measure``) per
1,000 distinct pages. The machine's load average is printed first: compare the runs of
one invocation, not across invocations.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script

from bench import bench_crawl
from trawl.testing.spellingweb import SpellingWeb

ROOT = bench_crawl.ROOT


@dataclass
class Web:
    name: str
    web: SpellingWeb
    root: Path
    port: int
    hosts: list[str]
    pages: set[str]
    conf: Path
    seeds: Path
    resolve: Path


@dataclass
class Run:
    web: str
    label: str
    ok: int  # 200 answers to page requests
    requests: int
    missed: int
    wall: float
    cpu: float
    example: str


def build(name: str, root: Path, hosts: int, pages: int, seed: int) -> Web:
    started = time.monotonic()
    web = SpellingWeb(hosts, pages, seed, campaign=name == "campaign", plain=name == "plain")
    scope = [h for h in web.hosts if not web.sample.plan(h).crawl_delay]
    port = bench_crawl.free_port()
    conf = web.write_static(root / "web", port=port)
    for d in (root, root / "web"):
        d.chmod(0o755)
    seeds, resolve = root / "seeds.txt", root / "hosts.map"
    seeds.write_text("".join(web.sample.url(h, "/", port=port) + "\n" for h in scope))
    resolve.write_text("".join(f"{h}={bench_crawl.LOOPBACK}\n" for h in web.hosts))
    wanted = {p for p in web.distinct_pages() if p.split("/")[0] in scope}
    print(
        f"{name} web: {hosts} hosts x {pages} pages (seed {seed}), {len(scope)} in scope, "
        f"{len(wanted):,} distinct pages; written in {time.monotonic() - started:.0f} s"
    )
    return Web(name, web, root, port, scope, wanted, conf, seeds, resolve)


def crawl(w: Web, work: Path, label: str, pythonpath: Path | None, extra: list[str]) -> Run:
    slug = f"{w.name}-{label.split()[0]}"
    data = work / f"{slug}-data"
    cmd = [sys.executable, "-m", "trawl", "crawl", "--seeds", str(w.seeds), "--data", str(data)]
    cmd += ["--delay", "0", "--allow-network", "127.0.0.0/8", "--quiet"]
    cmd += ["--resolve-file", str(w.resolve), "--scope", "allowlist", *extra]
    for host in w.hosts:
        cmd += ["--allow-host", host]
    if pythonpath is not None:
        cmd = ["/usr/bin/env", f"PYTHONPATH={pythonpath}", *cmd]
    shown = bench_crawl.show_cmd(cmd).replace(str(work), "WORK")
    print(f"\n$ {shown}", flush=True)
    prefix = work / f"{slug}-nginx"
    with bench_crawl.Nginx(prefix, w.conf, w.port, log=True, hold=False) as nginx:
        m = bench_crawl.measure(cmd, work, slug)
    ok: Counter[str] = Counter()
    requests = 0
    for line in nginx.access_log.read_text().splitlines():
        host, _msec, _took, status, target, _agent = line.split("\t")
        requests += 1
        if status != "200" or target == "/robots.txt":
            continue
        page = w.web.page_of(f"http://{host}:{w.port}{target}")
        if page is not None:
            ok[page] += 1
    missed = sorted(w.pages - set(ok))
    run = Run(w.name, label, sum(ok.values()), requests, len(missed), m.wall, m.cpu, "")
    if missed:
        run.example = missed[0]
    print(
        f"  exit {m.rc}; {run.ok:,} page answers 200 for {len(w.pages):,} distinct pages "
        f"= {run.ok / len(w.pages):.3f} a page; missed {run.missed}"
        + (f" (e.g. {run.example})" if missed else "")
        + f"; {requests:,} requests; {m.wall:.0f} s wall; "
        f"{m.cpu / len(w.pages) * 1000:.1f} CPU-s per 1,000 distinct pages",
        flush=True,
    )
    return run


def export(ref: str, work: Path, label: str) -> Path:
    """``ref``'s ``src/`` (git archive), for PYTHONPATH."""
    out = work / f"{label}-{ref.replace('/', '_')}"
    out.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", ref, "src"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", ref],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    print(f"{label}: {ref} ({commit}) exported to {out}")
    return out / "src"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--before", default="main", help="the git ref to compare with (main)")
    p.add_argument("--skip-before", action="store_true")
    p.add_argument(
        "--skip-tracking-only", action="store_true", help="no --no-equivalences run (spelling web)"
    )
    p.add_argument("--skip-campaign", action="store_true", help="the spelling web only")
    p.add_argument(
        "--after",
        metavar="REF",
        help="run this git ref's code as 'after' (default: this checkout's working tree)",
    )
    p.add_argument(
        "--after-option",
        action="append",
        default=[],
        metavar="OPTION",
        help="an option for the 'after' crawls (repeatable), e.g. "
        "--after-option=--equivalence-pages=3",
    )
    p.add_argument(
        "--plain-hosts",
        type=int,
        default=0,
        help="also crawl SampleWeb as it is (this many hosts, --campaign-pages pages): "
        "the CPU per page of the same crawl before and after (0: not)",
    )
    p.add_argument("--campaign-hosts", type=int, default=250)
    p.add_argument("--campaign-pages", type=int, default=48)
    p.add_argument("--hosts", type=int, default=12, help="hosts of the spelling web")
    p.add_argument("--pages", type=int, default=300, help="pages per host of the spelling web")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=float, default=3600, help="limit per crawl, seconds")
    p.add_argument("--out", type=Path, help="work here (default: a temp dir)")
    p.add_argument("--keep", action="store_true", help="keep the webs and outputs")
    args = p.parse_args(argv)
    bench_crawl.ensure_nginx()
    work = Path(tempfile.mkdtemp(prefix="trawl-hygiene-", dir=args.out))
    work.chmod(0o755)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} cores, load average {load}; work dir {work}")
    try:
        before = None if args.skip_before else export(args.before, work, "before")
        after = None if args.after is None else export(args.after, work, "after")
        webs = []
        if args.plain_hosts:
            webs.append(
                build("plain", work / "plain", args.plain_hosts, args.campaign_pages, args.seed)
            )
        if not args.skip_campaign:
            webs.append(
                build(
                    "campaign",
                    work / "campaign",
                    args.campaign_hosts,
                    args.campaign_pages,
                    args.seed,
                )
            )
        webs.append(build("spelling", work / "spelling", args.hosts, args.pages, args.seed))
        limit = ["--max-duration", str(args.timeout)]
        runs: list[Run] = []
        for w in webs:
            if before is not None:
                runs.append(crawl(w, work, f"before ({args.before})", before, limit))
            if w.name == "spelling" and not args.skip_tracking_only:
                runs.append(crawl(w, work, "tracking only", after, [*limit, "--no-equivalences"]))
            runs.append(crawl(w, work, "after", after, [*limit, *args.after_option]))
        print("\nweb       run               200s/page  missed  requests   wall s  CPU-s/1k pages")
        for r in runs:
            pages = len(next(w.pages for w in webs if w.name == r.web))
            print(
                f"{r.web:9} {r.label:17} {r.ok / pages:9.3f}  {r.missed:6}  {r.requests:8,}"
                f"  {r.wall:7.0f}  {r.cpu / pages * 1000:14.1f}"
            )
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"load average at the end: {load}")
    finally:
        if args.keep:
            print(f"\nkept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
