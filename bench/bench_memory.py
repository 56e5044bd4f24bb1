"""Peak RSS of every process of a crawl at two sizes: does memory stay flat as the
crawl grows?

    .venv/bin/python bench/bench_memory.py [--sizes 10000,200000] [--per-host 50 | --hosts N]
        [--modes embedded,redis] [--every 0.2] [--tracemalloc 60] [--peaks DIR] [--keep]

For each size N: bench_crawl's local web (``SampleWeb``, pages of 15 to 80 KB, served by
our own nginx, no access log, no delay: ``bench_crawl.build_web`` and ``Nginx``) of
N / per-host hosts x per-host pages, so that hosts grow with pages (``--hosts N``: N
hosts at every size, so that pages alone grow); then a crawl of it,
every feature on (the defaults: WARC, main text, language, exact and near dedup,
index, link graph), no politeness delay (``--delay 0``):

- ``embedded``: ``trawl crawl`` (bench_crawl's command line), one process and its
  parse workers;
- ``redis``: a fleet of one: a redis-server and a SeaweedFS S3 server of our own (as
  in bench_fleet), the crawl submitted (``trawl crawl --redis --no-worker --blobs
  s3://...``) and one ``trawl worker --redis`` doing all of it. After the crawl, what
  holds redis-server's memory: the crawl's keys by kind, with ``MEMORY USAGE``
  (``_redismem.py``).

Every ``--every`` s a thread samples every process of the tree (psutil, and the
kernel's high-water mark VmHWM from /proc, which misses nothing between samples), and
keeps each process's peak RSS; the report gives, per process kind (crawl or worker
process, parse worker, forkserver, resource tracker, and for redis: the submitter,
redis-server, the S3 server), the largest peak of one process, how many there were,
and the growth from the smaller size to the larger. The crawl process's RSS at a
quarter, half, three quarters and the end of the run shows whether it still climbs.
Beside it, the CPU-seconds per 1,000 pages stored of the crawl (or worker) process's
tree, its parse workers included (wait4), and for redis of the submitter and of each
server (from /proc): the CPU figures at both sizes from the same runs.

``--peaks DIR``: at each new high of the crawl (or worker) process's anonymous RSS
(from ``--peaks-after`` s on), its Python threads' stacks (``py-spy dump``, the
process not paused) go to DIR, and the report counts what its busy threads were in at
those highs (``_peaks.py``): what the short swings that set the peaks are.

``--tracemalloc S``: the largest size's crawl process runs under bench/_memtrace.py,
which writes what holds its Python heap every S seconds (and what grew since the
first snapshot) to ``memtrace/``; the RSS of that run is not comparable (tracemalloc
costs memory and CPU), so it is a separate, extra run.

Figures are printed, never asserted. Only loopback traffic.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run as a script

from bench import _redismem, bench_crawl, bench_fleet  # noqa: E402
from bench._hostcost import host_bytes, host_caps  # noqa: E402
from bench._peaks import PeakWatch  # noqa: E402

MB = 1e6
MEMTRACE = HERE / "_memtrace.py"


def _status(pid: int, *names: str) -> list[int]:
    """Fields of /proc/PID/status in bytes (VmHWM: the kernel's peak RSS; RssAnon,
    RssFile: the RSS's anonymous and file-backed parts); 0 when gone."""
    found = dict.fromkeys(names, 0)
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key = line.split(":", 1)[0]
            if key in found:
                found[key] = int(line.split()[1]) * 1024
    except OSError:
        pass
    return [found[n] for n in names]


@dataclass
class Sampler:
    """Samples the tree of ``root`` (and ``others``: pid -> kind) every ``every`` s."""

    root: int
    root_kind: str
    others: dict[int, str]
    every: float
    peak: dict[int, int] = field(default_factory=dict)
    anon: dict[int, int] = field(default_factory=dict)  # largest RssAnon sampled
    kind: dict[int, str] = field(default_factory=dict)
    cmdline: dict[int, tuple[str, ...]] = field(default_factory=dict)  # as last sampled
    # the root's samples: seconds, RSS, file-backed and anonymous RSS
    series: list[tuple[float, int, int, int]] = field(default_factory=list)
    peak_sum: int = 0
    watch: PeakWatch | None = None  # --peaks: the root's stacks at its highs
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> Sampler:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        psutil: Any = importlib.import_module("psutil")
        started = time.monotonic()
        while not self._stop.is_set():
            try:
                root = psutil.Process(self.root)
                procs = [(root, self.root_kind), *((c, "") for c in root.children(True))]
            except psutil.Error:
                procs = []
            for pid, kind in self.others.items():
                with contextlib.suppress(psutil.Error):
                    p = psutil.Process(pid)
                    procs += [(p, kind), *((c, kind) for c in p.children(True))]
            total = 0
            for p, kind in procs:
                try:
                    rss = p.memory_info().rss
                    # Asked at every sample: a process between fork and exec still
                    # has its parent's command line, and its parent's memory (a
                    # forkserver sampled then would show the crawl process's): what it
                    # showed before its exec is forgotten.
                    line = tuple(p.cmdline())
                    if self.cmdline.setdefault(p.pid, line) != line:
                        self.cmdline[p.pid] = line
                        self.peak.pop(p.pid, None)
                        self.anon.pop(p.pid, None)
                        if p.pid == self.root:
                            self.series.clear()
                    self.kind[p.pid] = kind or bench_crawl._role(p, crawler=False)
                except psutil.Error:
                    continue
                total += rss
                hwm, anon, file = _status(p.pid, "VmHWM", "RssAnon", "RssFile")
                self.peak[p.pid] = max(self.peak.get(p.pid, 0), rss, hwm)
                self.anon[p.pid] = max(self.anon.get(p.pid, 0), anon)
                if p.pid == self.root and rss:  # 0: exited, not reaped yet
                    self.series.append((time.monotonic() - started, rss, file, anon))
                    if self.watch is not None:
                        self.watch.sample(self.series[-1][0], anon)
            self.peak_sum = max(self.peak_sum, total)
            self._stop.wait(self.every)

    def by_kind(self) -> dict[str, tuple[int, int, int]]:
        """kind -> (largest peak RSS of one process, processes, largest anonymous RSS
        sampled of one process: without mapped files such as the index's segments)."""
        out: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for pid, peak in self.peak.items():
            out[self.kind[pid]].append((peak, self.anon.get(pid, 0)))
        return {k: (max(p for p, _ in v), len(v), max(a for _, a in v)) for k, v in out.items()}

    def write_series(self, path: Path) -> None:
        """The root's samples as TSV: seconds, RSS, file-backed and anonymous MB."""
        rows = [f"{t:.1f}\t{r / MB:.1f}\t{f / MB:.1f}\t{a / MB:.1f}" for t, r, f, a in self.series]
        path.write_text("s\trss\tfile\tanon\n" + "\n".join(rows) + "\n")

    def climb(self) -> str:
        """The root's RSS at a quarter, half, three quarters of the run and its end."""
        if not self.series:
            return "no samples"
        end = self.series[-1][0]
        marks = []
        for q in (0.25, 0.5, 0.75, 1.0):
            t, rss, _, _ = next(x for x in self.series if x[0] >= q * end)
            marks.append(f"{rss / MB:.0f} MB at {t:.0f} s")
        top_t, top, file, _ = max(self.series, key=lambda x: x[1])
        return ", ".join(marks) + (
            f" (largest sample {top / MB:.0f} MB at {top_t:.0f} s, of which "
            f"{file / MB:.0f} MB file-backed: mapped files, the index's segments)"
        )


@dataclass
class Measured:
    size: int
    mode: str
    pages: int
    wall: float
    kinds: dict[str, tuple[int, int, int]]
    peak_sum: int
    climb: str
    command: str
    peaks: str = ""
    # CPU-seconds: the crawl (or worker) process's tree, its parse workers included;
    # for redis, the submitter, redis-server and the S3 server apart
    cpu: float = 0.0
    others_cpu: dict[str, float] = field(default_factory=dict)

    def per_1k(self, seconds: float) -> float:
        return 1000 * seconds / max(1, self.pages)

    def cpu_line(self) -> str:
        line = f"{self.per_1k(self.cpu):.2f} CPU-s per 1,000 pages ({self.mode} process tree)"
        for kind, seconds in self.others_cpu.items():
            line += f", {kind} {self.per_1k(seconds):.2f}"
        return line


def embedded(
    web: bench_crawl.Web, work: Path, size: int, args: argparse.Namespace, trace: float = 0
) -> Measured:
    data = work / (f"embedded-{size}" + ("-traced" if trace else ""))
    cmd = bench_crawl.trawl_cmd(web, data, *args.crawl_arg)
    if trace:  # python bench/_memtrace.py DIR EVERY -- crawl ...
        cmd = [sys.executable, str(MEMTRACE), str(work / "memtrace"), str(trace), "--", *cmd[3:]]
    log = work / f"embedded-{size}.log"
    started = time.monotonic()
    with log.open("wb") as sink:
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT, cwd=bench_crawl.ROOT)
    watch = None if trace else _watch(args, proc, size)
    with Sampler(proc.pid, "crawl process", {}, args.every, watch=watch) as s:
        cpu = bench_fleet.wait_cpu(proc, timeout=args.timeout, what=f"crawl of {size:,}")
    if args.series:
        s.write_series(args.series / f"embedded-{size}{'-traced' if trace else ''}.tsv")
    wall = time.monotonic() - started
    cpu += bench_fleet.reap_orphans()  # parse workers that outlived the crawl process
    pages = bench_fleet.stored(["--data", str(data)])
    shown = bench_crawl.show_cmd(cmd)
    peaks = "" if watch is None else watch.summary()
    kinds = s.by_kind()
    return Measured(size, "embedded", pages, wall, kinds, s.peak_sum, s.climb(), shown, peaks, cpu)


def redis_worker(
    web: bench_crawl.Web, work: Path, size: int, args: argparse.Namespace, servers: Servers
) -> Measured:
    crawl_id = f"mem{size}"
    bucket = servers.s3.create_bucket(f"mem-{size}")
    place = ["--redis", servers.url, "--crawl-id", crawl_id]
    args_web = bench_fleet.web_args(web, work / f"submit-{size}")
    blobs = ["--blobs", f"s3://{bucket}/crawl", "--no-worker"]
    submit = subprocess.Popen(
        [bench_fleet.TRAWL, "crawl", *place, *blobs, *args_web, *args.crawl_arg],
        stderr=subprocess.DEVNULL,
    )
    cmd = [bench_fleet.TRAWL, "worker", *place, "--quiet", "--data", str(work / f"w-{size}")]
    log = work / f"worker-{size}.log"
    others = {servers.redis.pid: "redis-server", servers.s3.process.pid: "S3 server (weed)"}
    others[submit.pid] = "submitter"
    servers_then = servers.cpu()
    started = time.monotonic()
    with log.open("wb") as sink:
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT)
    watch = _watch(args, proc, size, "worker")
    with Sampler(proc.pid, "worker process", others, args.every, watch=watch) as s:
        cpu = bench_fleet.wait_cpu(proc, timeout=args.timeout, what=f"worker of {size:,}")
        submitter = bench_fleet.wait_cpu(submit, timeout=60, what="submitter")
    if args.series:
        s.write_series(args.series / f"redis-{size}.tsv")
    wall = time.monotonic() - started
    cpu += bench_fleet.reap_orphans()  # parse workers that outlived the worker process
    servers_now = servers.cpu()
    pages = bench_fleet.stored(place)
    held = _redismem.holders(servers.url, crawl_id)
    used = _redismem.used_memory(servers.url)
    for line in _redismem.report(held, pages, used):
        print(line, flush=True)
    shown = bench_crawl.show_cmd(cmd)
    peaks = "" if watch is None else watch.summary()
    kinds = s.by_kind()
    spent = {"submitter": submitter}
    spent.update((k, servers_now[k] - servers_then[k]) for k in servers_now)
    return Measured(
        size, "redis", pages, wall, kinds, s.peak_sum, s.climb(), shown, peaks, cpu, spent
    )


def _watch(
    args: argparse.Namespace, proc: subprocess.Popen[bytes], size: int, label: str = "crawl"
) -> PeakWatch | None:
    if args.peaks is None:
        return None
    return PeakWatch(proc.pid, args.peaks, f"{label}-{size}", after=args.peaks_after)


@dataclass
class Servers:
    redis: subprocess.Popen[bytes]
    url: str
    s3: Any  # trawl.testing.s3server.SeaweedS3

    @classmethod
    def start(cls, work: Path) -> Servers:
        from trawl.testing.s3server import SeaweedS3

        server, port = bench_fleet.start_redis(work / "redis")
        s3 = SeaweedS3.start(work / "s3")
        os.environ.update(s3.env())
        return cls(server, f"redis://127.0.0.1:{port}/0", s3)

    def cpu(self) -> dict[str, float]:
        """CPU-seconds of each server so far (from /proc: they are still running)."""
        return {
            "redis-server": bench_fleet.proc_cpu(self.redis.pid),
            "S3 server": bench_fleet.proc_cpu(self.s3.process.pid),
        }

    def stop(self) -> None:
        self.redis.terminate()
        self.redis.wait()
        self.s3.stop()


ORDER = [
    "crawl process",
    "worker process",
    "parse worker",
    "forkserver",
    "resource tracker",
    "submitter",
    "redis-server",
    "S3 server (weed)",
]


def report(runs: list[Measured]) -> list[str]:
    out: list[str] = []
    for mode in dict.fromkeys(r.mode for r in runs):
        mine = sorted((r for r in runs if r.mode == mode), key=lambda r: r.size)
        small, large = mine[0], mine[-1]
        out.append(
            f"\n{mode}: peak RSS per process kind (largest one process; processes; its "
            "anonymous part, without mapped files, in brackets)"
        )
        head = " | ".join(f"{r.size:,} pages ({r.pages:,} stored, {r.wall:.0f} s)" for r in mine)
        out.append(f"| process | {head} | growth |")
        out.append("|---|" + "---|" * len(mine) + "---|")
        kinds = sorted({k for r in mine for k in r.kinds}, key=lambda k: [*ORDER, k].index(k))
        for kind in kinds:
            cells = []
            for r in mine:
                peak, n, anon = r.kinds.get(kind, (0, 0, 0))
                cells.append(f"{peak / MB:.0f} MB ({n}) [{anon / MB:.0f}]" if n else "-")
            a, b = small.kinds.get(kind, (0, 0, 0)), large.kinds.get(kind, (0, 0, 0))
            growth = "-"
            if a[0] and a[2] and len(mine) > 1:
                growth = (
                    f"{100 * (b[0] - a[0]) / a[0]:+.1f} % [{100 * (b[2] - a[2]) / a[2]:+.1f} %]"
                )
            out.append(f"| {kind} | {' | '.join(cells)} | {growth} |")
        sums = " | ".join(f"{r.peak_sum / MB:.0f} MB" for r in mine)
        out.append(f"| whole tree (largest sum at one sample) | {sums} | |")
        for r in mine:
            out.append(f"{r.size:,}: {r.cpu_line()}")
            out.append(f"{r.size:,}: {r.mode} process RSS over the run: {r.climb}")
            out.append(f"   $ {r.command}")
            if r.peaks:
                out.append(f"   {r.peaks}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--sizes", default="10000,200000", help="pages of each web, smallest first")
    grow = ap.add_mutually_exclusive_group()
    grow.add_argument("--per-host", type=int, default=50, help="pages per host")
    grow.add_argument(
        "--hosts",
        type=int,
        metavar="N",
        help="N hosts at every size (pages per host grow with the size): pages alone grow",
    )
    ap.add_argument("--modes", default="embedded,redis")
    ap.add_argument("--every", type=float, default=0.2, help="seconds between samples")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=4 * 3600, help="limit per crawl, s")
    ap.add_argument(
        "--tracemalloc",
        type=float,
        default=0,
        metavar="S",
        help="also crawl the largest web under tracemalloc, a snapshot every S s",
    )
    ap.add_argument(
        "--crawl-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="one more argument of every crawl (repeatable), e.g. --crawl-arg=--config=F.toml",
    )
    ap.add_argument("--out", type=Path, help="work here (default: a temp dir)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument(
        "--series", type=Path, help="write the crawl (or worker) process's samples here, TSV"
    )
    ap.add_argument(
        "--peaks",
        type=Path,
        metavar="DIR",
        help="at each new high of the crawl (or worker) process's anonymous RSS, dump its "
        "Python threads' stacks here (py-spy) and count what the busy ones were in",
    )
    ap.add_argument(
        "--peaks-after", type=float, default=10.0, help="with --peaks: highs from this second on"
    )
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    # SIGTERM as an exit: the servers this run started are stopped (``finally``).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    modes = args.modes.split(",")
    libc = ctypes.CDLL(None, use_errno=True)  # orphaned parse workers come to us
    if libc.prctl(bench_crawl.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    bench_crawl.ensure_nginx()
    work = Path(tempfile.mkdtemp(prefix="trawl-bench-memory-", dir=args.out))
    if args.series:
        args.series.mkdir(parents=True, exist_ok=True)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} cores, load {load}; work dir {work}", flush=True)
    servers = Servers.start(work) if "redis" in modes else None
    runs: list[Measured] = []
    try:
        for size in sizes:
            if args.hosts:
                hosts, per_host = args.hosts, max(1, size // args.hosts)
            else:
                hosts, per_host = max(1, size // args.per_host), args.per_host
            web = bench_crawl.build_web(work / f"web-{size}", hosts, per_host, args.seed)
            print(f"{size:,}: {len(web.hosts)} hosts in scope, {len(web.pages):,} pages")
            nginx = bench_crawl.Nginx(work / f"nginx-{size}", web.sites_conf, web.port)
            with nginx:
                for mode in modes:
                    if mode == "embedded":
                        runs.append(embedded(web, work, size, args))
                    else:
                        assert servers is not None
                        runs.append(redis_worker(web, work, size, args, servers))
                    r = runs[-1]
                    peaks = ", ".join(
                        f"{k} {v[0] / MB:.0f} MB ({v[1]}) [{v[2] / MB:.0f}]"
                        for k, v in sorted(r.kinds.items())
                    )
                    print(f"  {mode}: {r.pages:,} pages stored in {r.wall:.0f} s; peaks: {peaks}")
                    print(f"    {r.cpu_line()}")
                    print(f"    {mode} process over the run: {r.climb}", flush=True)
                    if r.peaks:
                        print(f"    {r.peaks}", flush=True)
                if args.tracemalloc and size == sizes[-1]:
                    embedded(web, work, size, args, trace=args.tracemalloc)
                    print(f"  tracemalloc snapshots: {work / 'memtrace'}")
            if not args.keep:  # the web and the crawl's outputs: gigabytes at 200k
                shutil.rmtree(web.root, ignore_errors=True)
                for d in work.glob(f"*-{size}"):
                    shutil.rmtree(d, ignore_errors=True)
        for line in report(runs):
            print(line)
        print("\n" + host_bytes(work))
        for line in host_caps():
            print(line)
    finally:
        if servers is not None:
            servers.stop()
        if args.keep or args.tracemalloc:
            print(f"\nkept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
