"""The fleet against the one-machine crawl: 1, 2, 4 `trawl worker`s over one Redis and
one S3 server (SeaweedFS), on the local nginx web with a fixed response latency.

Per run: pages stored, pages/s, CPU-seconds per 1,000 pages of the workers (each one's
whole process tree, from wait4), of redis-server and of SeaweedFS (from /proc), Redis
commands and bytes per page (INFO deltas). The embedded crawl of the same web is the
yardstick for pages per CPU-second.

    .venv/bin/python bench/bench_fleet.py --hosts 40 --pages 50 --latency 0.2
    .venv/bin/python bench/bench_fleet.py --hosts 96 --pages 12 --latency 1 --concurrency 8
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import redis

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script

from bench import bench_crawl
from trawl.testing.s3server import SeaweedS3

TRAWL = str(Path(sys.executable).with_name("trawl"))
TICKS = os.sysconf("SC_CLK_TCK")
CONCURRENCY: list[str] = []  # --concurrency N for the embedded crawl and each worker


def proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


@dataclass
class Run:
    name: str
    pages: int
    wall: float
    worker_cpu: float  # every worker (and submitter) process tree
    redis_cpu: float = 0.0
    s3_cpu: float = 0.0
    redis_commands: int = 0
    redis_bytes: int = 0
    round_trips: int = 0  # the workers' own count (the submitter's not included)


def wait_cpu(
    proc: subprocess.Popen[bytes], *, timeout: float | None = None, what: str = ""
) -> float:
    """Wait for ``proc`` (SIGINT past ``timeout`` seconds); the CPU-seconds of its tree
    (wait4's rusage: it and the children it reaped)."""
    what = what or " ".join(map(str, proc.args))[:120]  # type: ignore[arg-type]
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, 0 if deadline is None else os.WNOHANG)
        if pid:
            break
        assert deadline is not None
        if time.monotonic() > deadline:
            print(f"!! {what}: over {timeout:.0f} s, stopped (SIGINT)", file=sys.stderr)
            proc.send_signal(2)
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.1)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        print(f"!! {what} exited {proc.returncode}", file=sys.stderr)
    return float(usage.ru_utime + usage.ru_stime)


def wait_all(procs: list[subprocess.Popen[bytes]], *, say: str = "") -> float:
    """Wait for every process; the CPU-seconds of each one's tree (wait4's rusage)."""
    each = [wait_cpu(p) for p in procs]
    orphans = reap_orphans()
    if say:
        print(
            f"{say}: CPU-s of each process: "
            + ", ".join(f"{c:.2f}" for c in each)
            + f"; their orphans (parse workers): {orphans:.2f}"
        )
    return sum(each) + orphans


def reap_orphans(quiet: float = 1.0) -> float:
    """The CPU-seconds of the processes that outlived their parent and came to us (we
    are a child subreaper, see ``main``): a worker's parse workers end
    just after it, so wait4 of the worker alone misses them. Waits until none has come
    for ``quiet`` seconds (the servers we started are our children too, still running)."""
    total = 0.0
    last = time.monotonic()
    while time.monotonic() - last < quiet:
        try:
            pid, _status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid:
            total += usage.ru_utime + usage.ru_stime
            last = time.monotonic()
        else:
            time.sleep(0.05)
    return total


def web_args(web: bench_crawl.Web, scratch: Path) -> list[str]:
    cmd: list[str] = bench_crawl.trawl_cmd(web, scratch)[4:]  # not "python -m trawl crawl"
    return cmd


def _known(args: list[str]) -> int:
    out = subprocess.run([TRAWL, "stats", "--json", *args], capture_output=True, check=True)
    return int(json.loads(out.stdout)["urls known"])


def stored(args: list[str]) -> int:
    out = subprocess.run([TRAWL, "stats", "--json", *args], capture_output=True, check=True)
    return int(json.loads(out.stdout)["counters"].get("fetch:stored", 0))


def embedded(web: bench_crawl.Web, work: Path) -> Run:
    data = work / "embedded"
    started = time.monotonic()
    proc = subprocess.Popen([TRAWL, "crawl", *web_args(web, data), *CONCURRENCY])
    cpu = wait_all([proc])
    wall = time.monotonic() - started
    return Run("embedded", stored(["--data", str(data)]), wall, cpu)


def fleet(
    web: bench_crawl.Web, work: Path, workers: int, r: redis.Redis, redis_pid: int, s3: SeaweedS3
) -> Run:
    crawl_id = f"bench{workers}"
    bucket = s3.create_bucket(f"bench-{workers}")
    url = f"redis://127.0.0.1:{r.connection_pool.connection_kwargs['port']}/0"
    place = ["--redis", url, "--crawl-id", crawl_id]
    before, calls0, mem0 = r.info("stats"), _calls(r), int(r.info("memory")["used_memory"])
    redis0, s30 = proc_cpu(redis_pid), proc_cpu(s3.process.pid)
    started = time.monotonic()
    args = web_args(web, work / f"submit{workers}")
    submit = subprocess.Popen(
        [TRAWL, "crawl", *place, "--blobs", f"s3://{bucket}/crawl", "--no-worker", *args],
        stderr=subprocess.DEVNULL,
    )
    logs = [work / f"w{workers}-{i}.log" for i in range(workers)]
    procs = []
    for i, log in enumerate(logs):
        with log.open("w") as err:
            cmd = [TRAWL, "worker", *place, "--quiet", "--data", str(work / f"w{workers}-{i}")]
            cmd += CONCURRENCY
            procs.append(subprocess.Popen(cmd, stderr=err))
    cpu = wait_all([submit, *procs], say=f"{workers} workers (submitter first)")
    trips = 0
    for log in logs:
        found = re.search(r"redis: (\d+) round trips", log.read_text())
        trips += int(found[1]) if found else 0
    wall = time.monotonic() - started
    after, calls = r.info("stats"), _calls(r)
    pages = stored(place)
    known = _known(place)
    grown = int(r.info("memory")["used_memory"]) - mem0
    print(f"{workers} workers: Redis memory grew {grown / 1e6:.1f} MB for {known:,} URLs "
          f"({grown / max(1, known):.0f} bytes a URL, pages and queues included)")  # fmt: skip
    top = sorted(((calls[k] - calls0.get(k, 0), k) for k in calls), reverse=True)[:6]
    print(f"{workers} workers: Redis calls per page by command: "
          + ", ".join(f"{k} {n / max(1, pages):.1f}" for n, k in top))  # fmt: skip
    return Run(
        f"{workers} worker{'s' * (workers > 1)}",
        pages,
        wall,
        cpu,
        redis_cpu=proc_cpu(redis_pid) - redis0,
        s3_cpu=proc_cpu(s3.process.pid) - s30,
        redis_commands=after["total_commands_processed"] - before["total_commands_processed"],
        redis_bytes=(after["total_net_input_bytes"] - before["total_net_input_bytes"])
        + (after["total_net_output_bytes"] - before["total_net_output_bytes"]),
        round_trips=trips,
    )


def _calls(r: redis.Redis) -> dict[str, int]:
    stats = r.info("commandstats")
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}


def table(runs: list[Run]) -> str:
    base = runs[0]
    base_rate = base.pages / base.worker_cpu
    lines = [
        "| run | pages | pages/s | worker CPU-s /1k | Redis CPU-s /1k | S3 CPU-s /1k | "
        "pages per worker CPU-s vs embedded | Redis round trips /page | "
        "Redis commands /page | Redis KB /page |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for x in runs:
        k = x.pages / 1000
        lines.append(
            f"| {x.name} | {x.pages:,} | {x.pages / x.wall:.1f} | {x.worker_cpu / k:.2f} | "
            f"{x.redis_cpu / k:.2f} | {x.s3_cpu / k:.2f} | "
            f"{(x.pages / x.worker_cpu) / base_rate:.2f} | "
            f"{x.round_trips / max(1, x.pages):.1f} | "
            f"{x.redis_commands / max(1, x.pages):.1f} | "
            f"{x.redis_bytes / 1024 / max(1, x.pages):.1f} |"
        )
    return "\n".join(lines)


def start_redis(directory: Path) -> tuple[subprocess.Popen[bytes], int]:
    """Our own redis-server on a free 127.0.0.1 port, its files in ``directory``
    (append-only file, fsync every second): the process and its port."""
    directory.mkdir()
    port = bench_crawl.free_port()
    server = subprocess.Popen(
        [shutil.which("redis-server") or "/usr/bin/redis-server", "--port", str(port),
         "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
         "--appendfsync", "everysec", "--dir", str(directory)],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    r = redis.Redis(port=port)
    for _ in range(100):
        try:
            r.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    r.close()
    return server, port


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, default=40)
    ap.add_argument("--pages", type=int, default=50)
    ap.add_argument("--latency", type=float, default=0.2, help="seconds each response waits")
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--concurrency",
        type=int,
        default=None,
        help="fetches in flight per worker (and for the embedded crawl): with fewer than "
        "the web's hosts, pages/s grows with workers until the politeness limit",
    )
    args = ap.parse_args()
    # Orphans (a crawl's parse workers, which end after it) become our
    # children, so their CPU is counted (``reap_orphans``).
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(bench_crawl.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    global CONCURRENCY
    CONCURRENCY = [] if args.concurrency is None else ["--concurrency", str(args.concurrency)]
    bench_crawl.ensure_nginx()
    bench_crawl.SLOW = args.latency
    work = Path(tempfile.mkdtemp(prefix="trawl-bench-fleet-"))
    web = bench_crawl.build_web(work, args.hosts, args.pages, args.seed)
    server, port = start_redis(work / "redis")
    s3 = SeaweedS3.start(work / "s3")
    os.environ.update(s3.env())
    r = redis.Redis(port=port)
    try:
        with bench_crawl.Nginx(work / "nginx", web.sites_conf, web.port, log=True):
            runs = [embedded(web, work)]
            for n in (int(x) for x in args.workers.split(",")):
                runs.append(fleet(web, work, n, r, server.pid, s3))
        print(
            f"\n{args.hosts} hosts x {args.pages} pages, {args.latency * 1000:.0f} ms a "
            f"response, delay 0, concurrency {args.concurrency or 'default'}, "
            f"Redis appendfsync everysec, SeaweedFS S3\n"
        )
        print(table(runs))
    finally:
        server.terminate()
        s3.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
