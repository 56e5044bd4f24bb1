"""Pacing: how close trawl comes to the politeness limit when every host asks a delay.

Run with ``.venv/bin/python bench/bench_pacing.py [--hosts 250] [--pages 40]
[--delay 1] [--before main] [--runs 1] [--keep]`` (``--help`` for the rest).

The web: ``--hosts`` hosts of ``--pages`` small pages each (about 2 KB of random words,
so no page is a near duplicate of another), served by our own nginx on 127.0.0.1 (see
``bench_crawl.Nginx``: access log with ``$msec`` and ``$request_time``), each host's
responses held a time of its own drawn from ``--latency`` (nginx's echo module), so
hosts answer at different speeds and overlapping requests would show. Every host's
robots.txt says ``User-agent: *`` / ``Crawl-delay: D``. A page links to the next three
pages of its host, two random pages of its host and one random page of another host, so
a host's queue fills as its pages are parsed, as on a real site.

Each crawler (``before``: the tree of git ref ``--before``, extracted with ``git
archive``, run with ``PYTHONPATH`` on it; ``after``: this checkout) crawls the whole web
with its defaults (``--delay`` left at 1 s, so the delay asked is max(1, D)), against a
fresh nginx of its own, one after the other in the same run; ``--runs N`` alternates
them N times.

What is measured, per host, from the server's access log (start of a request =
``$msec - $request_time``, its end = ``$msec``; millisecond resolution):

- the gap after a response: the start of a host's next request minus the end of its
  previous one. The asked delay is the least it may be; p50, p90, p99, min and max, and
  how many gaps are under the delay by more than 2 ms (log rounding);
- overlaps: a request that starts before the host's previous one ended (never allowed);
- the fraction of the politeness limit. The limit of a host over the window from its
  first request's start to its last request's end is what it would have taken with
  every gap exactly the delay: ``ideal = sum(request times) + (n - 1) * delay``. The
  fraction is ``sum(ideal) / sum(window)`` over all hosts (1.0: every gap was exactly the
  delay). A second figure takes each host's window from the crawl's first request
  instead, so the time before a host's first request (robots.txt order, start-up)
  counts as lost too.

Also CPU-seconds of the crawler's process tree (exact, ``bench_crawl.measure``) per
1,000 pages, wall time, and the load average before each run: the machine may be shared,
and a starved event loop stretches gaps.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script

from bench import bench_crawl

ROOT = Path(__file__).resolve().parent.parent
LOOPBACK = bench_crawl.LOOPBACK
SLACK = 0.002  # nginx logs in milliseconds


# -- the web -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Web:
    root: Path
    port: int
    hosts: list[str]
    pages: int
    sites_conf: Path
    seeds_file: Path
    resolve_file: Path


def _words(rng: random.Random, n: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(n)]


def build_web(
    root: Path,
    hosts: int,
    pages: int,
    *,
    delay: float,
    seed: int,
    words: int,
    latency: tuple[float, float],
) -> Web:
    rng = random.Random(seed)
    vocab = _words(rng, 3000)
    port = bench_crawl.free_port()
    names = [f"pace{i:03d}.test" for i in range(hosts)]
    web = root / "web"
    blocks = [f"server {{\n    listen {LOOPBACK}:{port} default_server;\n    return 421;\n}}"]
    for h, host in enumerate(names):
        base = web / host
        base.mkdir(parents=True)
        (base / "robots.txt").write_text(f"User-agent: *\nCrawl-delay: {delay:g}\n")
        for i in range(pages):
            targets = {(i + k) % pages for k in (1, 2, 3)} | {rng.randrange(pages) for _ in "ab"}
            links = [f"http://{host}:{port}{_path(t)}" for t in sorted(targets) if t != i]
            other = names[(h + 1 + rng.randrange(max(1, hosts - 1))) % hosts]
            links.append(f"http://{other}:{port}{_path(rng.randrange(pages))}")
            text = " ".join(rng.choice(vocab) for _ in range(words))
            body = (
                f"<!doctype html><html><head><title>{host} page {i}</title></head><body>"
                f"<h1>Page {i} of {host}</h1><p>{text}</p><ul>"
                + "".join(f'<li><a href="{u}">{u}</a></li>' for u in links)
                + "</ul></body></html>\n"
            )
            folder = base / _path(i).strip("/")
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "index.html").write_text(body)
        hold = rng.uniform(*latency)  # this host's response time (nginx's echo module)
        blocks.append(
            f"server {{\n    listen {LOOPBACK}:{port};\n    server_name {host};\n"
            f"    root {base};\n    index index.html;\n"
            f"    location / {{\n        echo_sleep {hold:.3f};\n        echo_exec @file;\n    }}\n"
            "    location @file {\n        try_files $uri $uri/index.html =404;\n    }\n}"
        )
    sites_conf = web / "nginx.conf"
    sites_conf.write_text("\n".join(blocks) + "\n")
    for d in (root, web):
        d.chmod(0o755)
    seeds = root / "seeds.txt"
    seeds.write_text("".join(f"http://{h}:{port}/\n" for h in names))
    resolve = root / "hosts.map"
    resolve.write_text("".join(f"{h}={LOOPBACK}\n" for h in names))
    return Web(root, port, names, pages, sites_conf, seeds, resolve)


def _path(i: int) -> str:
    return "/" if i == 0 else f"/p/{i}/"


# -- the crawlers ------------------------------------------------------------------------------


def source_tree(ref: str, dest: Path) -> Path:
    """``src/`` of git ref ``ref``, extracted under ``dest``."""
    dest.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "src"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest / "src"


def crawl_cmd(web: Web, data: Path, timeout: float, probe: Path | None = None) -> list[str]:
    """``trawl crawl`` of the web with its defaults; with ``probe``, run under
    ``_pacing_probe.py`` writing its timings there."""
    head = [sys.executable, "-m", "trawl"]
    if probe is not None:
        head = [sys.executable, str(Path(__file__).with_name("_pacing_probe.py")), str(probe), "--"]
    cmd = [*head, "crawl", "--seeds", str(web.seeds_file)]
    cmd += ["--data", str(data), "--allow-network", "127.0.0.0/8"]
    cmd += ["--resolve-file", str(web.resolve_file), "--scope", "allowlist"]
    for host in web.hosts:
        cmd += ["--allow-host", host]
    return [*cmd, "--max-duration", str(timeout), "--quiet"]


@dataclass
class Figures:
    name: str
    load: tuple[float, float, float]
    wall: float
    cpu: float
    pages: int  # 200 responses other than robots.txt
    requests: int
    hosts: int
    gaps: list[float]
    under: int
    overlaps: int
    fraction: float
    fraction_from_start: float


def run(
    name: str,
    web: Web,
    work: Path,
    src: Path | None,
    *,
    timeout: float,
    delay: float,
    probe: bool = False,
) -> tuple[Figures, list[str]]:
    load = os.getloadavg()
    prefix = work / f"nginx-{name}"
    env_src = os.environ.get("PYTHONPATH")
    probe_out = work / f"probe-{name}.json" if probe else None
    cmd = crawl_cmd(web, work / f"data-{name}", timeout, probe_out)
    if src is not None:
        os.environ["PYTHONPATH"] = str(src)
    try:
        with bench_crawl.Nginx(prefix, web.sites_conf, web.port, log=True) as nginx:
            m = bench_crawl.measure(cmd, work, name)
    finally:
        if env_src is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = env_src
    figures = analyse(name, load, m, nginx.access_log, delay)
    return figures, breakdown(probe_out, delay) if probe_out is not None else []


def analyse(
    name: str,
    load: tuple[float, float, float],
    m: bench_crawl.Measured,
    log: Path,
    delay: float,
) -> Figures:
    by_host: dict[str, list[tuple[float, float]]] = defaultdict(list)
    pages = requests = 0
    for line in log.read_text().splitlines():
        host, msec, rtime, status, uri, _agent = line.split("\t")
        end = float(msec)
        by_host[host].append((end - float(rtime), end))
        requests += 1
        pages += status == "200" and uri != "/robots.txt"
    first = min(s for reqs in by_host.values() for s, _ in reqs)
    gaps: list[float] = []
    overlaps = 0
    ideal = window = window_from_start = 0.0
    for reqs in by_host.values():
        reqs.sort()
        for (_, prev_end), (start, _) in itertools.pairwise(reqs):
            if start < prev_end - SLACK:
                overlaps += 1
            gaps.append(start - prev_end)
        ideal += sum(e - s for s, e in reqs) + (len(reqs) - 1) * delay
        window += reqs[-1][1] - reqs[0][0]
        window_from_start += reqs[-1][1] - first
    under = sum(1 for g in gaps if g < delay - SLACK)
    return Figures(
        name,
        load,
        m.wall,
        m.cpu,
        pages,
        requests,
        len(by_host),
        gaps,
        under,
        overlaps,
        ideal / window if window else 0.0,
        ideal / window_from_start if window_from_start else 0.0,
    )


def _q(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=1000, method="inclusive")[int(q * 1000) - 1]


def _dist(values: list[float], scale: float = 1000.0, unit: str = "ms") -> str:
    if not values:
        return "none"
    return (
        f"n {len(values):,}  p50 {_q(values, 0.5) * scale:.1f}  p90 {_q(values, 0.9) * scale:.1f}"
        f"  p99 {_q(values, 0.99) * scale:.1f}  max {max(values) * scale:.1f} {unit}"
        f"  (sum {sum(values):.1f} s)"
    )


def breakdown(probe: Path, delay: float) -> list[str]:
    """Split the crawler's gaps after a response (see ``_pacing_probe.py``)."""
    data = json.loads(probe.read_text())
    gaps: list[float] = []
    dry: list[float] = []
    late: list[float] = []
    to_send: list[float] = []
    causes: dict[str, int] = defaultdict(int)
    by_count = lambda kv: -kv[1]  # noqa: E731
    for evs in data["events"].values():
        resp_t = ready = sched_t = pop_t = None
        has_work = True
        for ev in evs:
            kind, t = ev[0], ev[1]
            if kind == "resp":
                resp_t = t
            elif kind == "release":
                resp_t = t if resp_t is None else resp_t
                ready, has_work, sched_t = ev[2], ev[3], None
            elif kind == "sched":
                sched_t = t
            elif kind == "pop":
                pop_t = t
            elif kind == "send" and resp_t is not None and ready is not None and pop_t:
                gap = t - resp_t
                gaps.append(gap)
                eligible = ready
                lost_dry = 0.0
                if not has_work and sched_t is not None:
                    lost_dry = max(0.0, sched_t - ready)
                    eligible = max(ready, sched_t)
                    dry.append(lost_dry)
                lateness = max(0.0, pop_t - eligible)
                late.append(lateness)
                to_send.append(t - pop_t)
                if gap > 1.05 * delay:
                    parts = {"queue dry": lost_dry, "hand-out late": lateness}
                    parts["take to send"] = t - pop_t
                    parts["ready time after delay"] = max(0.0, ready - resp_t - delay)
                    causes[max(parts, key=lambda k: parts[k])] += 1
                resp_t = ready = pop_t = None
            elif kind == "send":
                resp_t = ready = pop_t = None
    lines = [
        f"  probe (crawler's clock): gap response-in to next request-out {_dist(gaps, 1.0, 's')}",
        f"    queue dry past the ready time: {_dist(dry)}",
        f"    hand-out after the host's ready time: {_dist(late)}",
        f"    take to send: {_dist(to_send)}",
        f"    gaps over {1.05 * delay:.2f} s by largest part: "
        + (", ".join(f"{k} {v}" for k, v in sorted(causes.items(), key=by_count)) or "none"),
    ]
    for key, values in sorted(data["samples"].items()):
        lines.append(f"    {key}: {_dist(values)}")
    lines.append(f"    crawler main process CPU {data['main_process_cpu']:.1f} s")
    return lines


def report(f: Figures, delay: float) -> list[str]:
    g = f.gaps
    return [
        f"{f.name}: load before {f.load[0]:.2f} {f.load[1]:.2f} {f.load[2]:.2f}; "
        f"wall {f.wall:.1f} s; {f.requests:,} requests to {f.hosts} hosts, {f.pages:,} pages",
        f"  fraction of the politeness limit: {f.fraction:.3f} per host window, "
        f"{f.fraction_from_start:.3f} from the crawl's first request",
        f"  gap after a response (asked {delay:g} s): p50 {_q(g, 0.5):.3f}  p90 {_q(g, 0.9):.3f}"
        f"  p99 {_q(g, 0.99):.3f}  min {min(g):.3f}  max {max(g):.3f}  "
        f"(p90 / asked {_q(g, 0.9) / delay:.3f})",
        f"  gaps under the delay: {f.under}; overlapping requests on a host: {f.overlaps}",
        f"  CPU {f.cpu:.1f} s ({1000 * f.cpu / max(1, f.pages):.2f} s per 1,000 pages, "
        f"{f.cpu / f.wall:.2f} of a core)",
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--hosts", type=int, default=250)
    p.add_argument("--pages", type=int, default=40, help="pages per host")
    p.add_argument("--delay", type=float, default=1.0, help="every host's Crawl-delay")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--words", type=int, default=300, help="words of text per page")
    p.add_argument(
        "--latency",
        default="0.02-0.2",
        help="each host's response time, seconds, drawn from LOW-HIGH (nginx holds it)",
    )
    p.add_argument("--before", default="main", help="git ref to compare with ('' for none)")
    p.add_argument("--skip-after", action="store_true", help="measure only --before")
    p.add_argument("--runs", type=int, default=1, help="alternate before/after this often")
    p.add_argument("--timeout", type=float, default=600, help="limit per crawl, seconds")
    p.add_argument(
        "--probe", action="store_true", help="run under _pacing_probe.py: where time goes"
    )
    p.add_argument("--out", type=Path, help="work here (default: a temp dir)")
    p.add_argument("--keep", action="store_true")
    args = p.parse_args(argv)
    bench_crawl.ensure_nginx()
    work = Path(tempfile.mkdtemp(prefix="trawl-pacing-", dir=args.out))
    try:
        print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}; work {work}")
        low, _, high = args.latency.partition("-")
        latency = (float(low), float(high or low))
        web = build_web(
            work,
            args.hosts,
            args.pages,
            delay=args.delay,
            seed=args.seed,
            words=args.words,
            latency=latency,
        )
        print(
            f"web: {args.hosts} hosts x {args.pages} pages of {args.words} words, Crawl-delay "
            f"{args.delay:g}, each host's responses held {latency[0]:g}-{latency[1]:g} s by nginx"
        )
        crawlers: list[tuple[str, Path | None]] = []
        if args.before:
            try:
                before = source_tree(args.before, work / "before")
            except subprocess.CalledProcessError as exc:
                print(f"no git ref {args.before!r} to compare with ({exc}); after only")
            else:
                crawlers.append((f"before ({args.before})", before))
        if not args.skip_after:
            crawlers.append(("after (this checkout)", None))
        for n in range(args.runs):
            for label, src in crawlers:
                name = label.split()[0] + f"-{n + 1}"
                figures, probed = run(
                    name, web, work, src, timeout=args.timeout, delay=args.delay, probe=args.probe
                )
                figures.name = f"{label} run {n + 1}"
                print("\n".join([*report(figures, args.delay), *probed]), flush=True)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
