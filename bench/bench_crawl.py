"""trawl against Scrapy on the same local web, back to back in the same run.

Run with ``.venv/bin/python bench/bench_crawl.py [--hosts 300] [--pages 100] [--seed 1]
[--page-bytes LOW,HIGH] [--skip-scrapy] [--skip-politeness] [--skip-profile]
[--profile-scrapy] [--keep] [--before SRC [--repeat N] [--outputs]]``
(``--help`` for the rest). A full run (300 x 100) takes about 25 minutes on 2 cores,
most of it Scrapy's crawl.

The web: ``SampleWeb(hosts, pages, seed)`` (pages of 15 to 80 KB, about 40 KB of text
each, unless ``--page-bytes``: 15000,20000 gives about 12 KB of text) written as static
files and served by Debian's nginx (``apt-get install nginx`` when missing): our own
nginx process with our own config in a temp dir (``daemon off``, one worker, listening
on 127.0.0.1 only, access log off, sendfile, keep-alive), never the system's. Host
index 1 has ``Crawl-delay: 2``: its ``pages`` pages would take at least 2 s each, which
would dominate the run, so that host is left out of the seeds and the scope of both
crawlers (the benchmark measures crawler CPU with no crawl delay). Disallow rules
(``/search/`` on about one host in seven) stay: they are linked from every page of those
hosts and both crawlers must not fetch them. SampleWeb's colour-facet pages of shop
hosts are linked from no page, so they are not counted among the pages to be fetched.
Each crawler also fetches every linked 404, counted in "HTTP responses", not in
"pages": since issue 13 one stale ``/archive/N/`` per host and a ``.../missing-N/`` on
one page in fifty (about 3 % of the URLs, as on real sites); before, every page had
one or two 404s of its own (about 1.5 a page, 60 % of the URLs), so the figures of
runs before and after compare per page, not per response, and wall time and CPU per
page dropped by what those requests cost (both crawlers alike).

The crawlers, both seeded with every in-scope home page and scoped to those hosts:
- trawl: ``python -m trawl crawl --delay 0 --scope allowlist --allow-host ...
  --resolve-file ... --allow-network 127.0.0.0/8 --quiet``; everything else default:
  one request per host at a time, parse workers (one per core), WARC, text
  extraction, exact-text dedup, the durable SQLite frontier with fsync.
- Scrapy: bench/_scrapy_spider.py in bench/.env (made here with ``pip install scrapy``
  when missing), a broad-crawl spider with Scrapy's documented broad-crawl settings,
  one request per domain, no delay, robots.txt obeyed, LinkExtractor on the same
  hosts, every page's body text to a JSON-lines feed. Twisted's epoll reactor: under
  the asyncio reactor Scrapy 2.14+ does not hold CONCURRENT_REQUESTS_PER_DOMAIN (see
  the spider). Scrapy fetches each home page twice (start requests bypass its dupe
  filter); its "pages" count every 200 HTML response, so that work counts for it.

How it is measured: each crawler runs under a small measuring process (this script,
``--measure``) that makes itself a child subreaper (``PR_SET_CHILD_SUBREAPER``), starts
the crawler, and after the crawler exits reaps every descendant (parse workers, the
forkserver, the resource tracker: orphans are re-parented to it). Its
``getrusage(RUSAGE_CHILDREN)`` is then the exact user + system CPU of the whole process
tree. The split into the crawler's main process and the other processes is from
psutil samples every 0.2 s (approximate; the total is exact). Peak RSS: psutil sums
the RSS of every process of the tree every 0.2 s and keeps the largest sum (shared
pages counted once per process); also the largest single process
(``ru_maxrss``, exact). Wall time is from start to the crawler's exit.

Also, unless skipped: a politeness check on a small separate web served with access
logging on (``$host $msec $request_time``) and every response held back 20 ms (nginx's
echo module, ``echo_sleep``) so that two requests in flight to one host would overlap
in the log: per host, no two requests of one crawler overlap, robots.txt comes first,
and nothing under a Disallow path is requested; and trawl's profile (py-spy, sampling the
crawler and its parse workers, idle threads left out) with the top functions by self
time per process kind (``--profile-scrapy``: Scrapy's too).

A change's cost: ``--before SRC`` (another checkout's ``src``, e.g. a worktree of main)
runs that build's crawl and this one's alternately on the same web, ``--repeat`` pairs,
and prints CPU-s per 1,000 pages of each pair and their ratio; ``--outputs`` checks
that what they kept is the same (bench/_outputs.py: URL outcomes, documents and index
hits of every run against the first; every page of the first run's WARC through both
builds' parser; the first run's documents indexed by both builds, the same hits).
The crawler's own process also records the CPU of each of its threads by name.

Everything generated goes to a temp dir (or ``--out``), removed at the end unless
``--keep``. Only loopback traffic. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib
import itertools
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # run as a script

from bench import _outputs  # noqa: E402

SCRAPY_ENV = HERE / ".env"
SPIDER = HERE / "_scrapy_spider.py"
NGINX = "/usr/sbin/nginx"
ECHO_MODULE = "/usr/lib/nginx/modules/ngx_http_echo_module.so"
SLOW = 0.02  # seconds each response of the politeness web waits before it is sent
LOOPBACK = "127.0.0.1"
PR_SET_CHILD_SUBREAPER = 36
SAMPLE_EVERY = 0.2
PAGE_BYTES = (15_000, 80_000)  # SampleWeb's default: pages of about 40 KB of text


# -- the measuring process ------------------------------------------------------------


def measure_main(argv: Sequence[str]) -> int:
    """``bench_crawl.py --measure OUT.json LOG -- CMD ...``: run CMD, account for its tree."""
    # No type stubs for psutil in the venv: load it as Any.
    psutil: Any = importlib.import_module("psutil")

    out, log = Path(argv[0]), Path(argv[1])
    cmd = list(argv[3:])
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    me = psutil.Process()
    started = time.monotonic()
    with log.open("wb") as sink:
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT, cwd=ROOT)
    ended: list[float] = []

    def wait() -> None:
        proc.wait()
        ended.append(time.monotonic())

    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    peak_sum = peak_procs = 0
    cpu_by_proc: dict[tuple[int, float], tuple[str, float]] = {}
    # The crawler's threads: (pid, tid) -> name, CPU (a pid taken for the crawler at a
    # first sample may turn out to be another process: only the crawler's count).
    cpu_by_thread: dict[tuple[int, int], tuple[str, float]] = {}
    while not ended:
        total = 0
        n = 0
        for child in me.children(recursive=True):
            try:
                with child.oneshot():
                    rss = child.memory_info().rss
                    times = child.cpu_times()
                    key = (child.pid, child.create_time())
                    # Asked at every sample: a process seen between its fork and its
                    # exec still has this script's command line.
                    role = _role(child, crawler=child.pid == proc.pid)
                    if role == "crawler":
                        _sample_threads(child, cpu_by_thread)
            except psutil.Error:
                continue
            cpu_by_proc[key] = (role, times.user + times.system)
            total += rss
            n += 1
        peak_sum = max(peak_sum, total)
        peak_procs = max(peak_procs, n)
        waiter.join(SAMPLE_EVERY)
    wall = ended[0] - started
    # Reap every descendant that outlived the crawler (we are their subreaper).
    deadline = time.monotonic() + 60
    leftovers = 0
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid:
            continue
        if time.monotonic() > deadline:
            for child in me.children(recursive=True):
                leftovers += 1
                with contextlib.suppress(psutil.Error):
                    child.kill()
            deadline = time.monotonic() + 10
        time.sleep(0.05)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    by_role: dict[str, float] = defaultdict(float)
    procs: Counter[str] = Counter()
    for role, cpu in cpu_by_proc.values():
        by_role[role] += cpu
        procs[role] += 1
    result = {
        "rc": proc.returncode,
        "wall": wall,
        "user": usage.ru_utime,
        "system": usage.ru_stime,
        "cpu": usage.ru_utime + usage.ru_stime,
        "max_rss_one": usage.ru_maxrss * 1024,
        "peak_rss_sum": peak_sum,
        "peak_procs": peak_procs,
        "sampled_cpu_by_role": dict(by_role),
        "processes_by_role": dict(procs),
        "leftovers_killed": leftovers,
        "crawler_threads": _by_name(
            {
                key: value
                for key, value in cpu_by_thread.items()
                if any(
                    pid == key[0] and role == "crawler"
                    for (pid, _), (role, _) in cpu_by_proc.items()
                )
            }
        ),
    }
    out.write_text(json.dumps(result, indent=1))
    return 0


def _role(child: Any, *, crawler: bool) -> str:
    """What a process of the tree is, from its command line (the parse workers run
    ``trawl.parse.worker``; a build before that, a forkserver's children, carried the
    forkserver's). ``crawler``: the process the measurer started, unless that is a
    profiler (py-spy) with the crawler its child."""
    text = " ".join(child.cmdline())
    if "py-spy" in text:
        return "profiler"
    if crawler or "-m trawl crawl" in text:
        return "crawler"
    if "trawl.parse.worker" in text:
        return "parse worker"
    if "forkserver" in text:
        parent = child.parent()
        parent_text = " ".join(parent.cmdline()) if parent is not None else ""
        return "parse worker" if "forkserver" in parent_text else "forkserver"
    if "resource_tracker" in text:
        return "resource tracker"
    if "multiprocessing" in text:
        return "parse worker"
    return text[:40] or "?"


def _sample_threads(proc: Any, cpu_by_thread: dict[tuple[int, int], tuple[str, float]]) -> None:
    """The CPU so far of each thread of ``proc``, with its name (``comm``): Python's
    threads carry the process's name, native ones (tantivy's indexers) their own."""
    for t in proc.threads():
        key = (proc.pid, t.id)
        if key not in cpu_by_thread:
            try:
                name = Path(f"/proc/{proc.pid}/task/{t.id}/comm").read_text().strip()
            except OSError:
                continue
        else:
            name = cpu_by_thread[key][0]
        cpu_by_thread[key] = (name, t.user_time + t.system_time)


def _by_name(cpu_by_thread: dict[tuple[int, int], tuple[str, float]]) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for name, cpu in cpu_by_thread.values():
        # Numbered threads of one pool (tantivy's "thrd-tantivy-index0", ...) as one.
        out[re.sub(r"\d+$", "", name)] += cpu
    return dict(out)


@dataclass
class Measured:
    rc: int
    wall: float
    user: float
    system: float
    cpu: float
    max_rss_one: int
    peak_rss_sum: int
    peak_procs: int
    sampled_cpu_by_role: dict[str, float]
    processes_by_role: dict[str, int]
    leftovers_killed: int
    crawler_threads: dict[str, float] = field(default_factory=dict)


def measure(
    cmd: Sequence[str], workdir: Path, name: str, env: dict[str, str] | None = None
) -> Measured:
    out, log = workdir / f"{name}.measure.json", workdir / f"{name}.log"
    runner = [sys.executable, str(Path(__file__).resolve()), "--measure", str(out), str(log)]
    subprocess.run([*runner, "--", *cmd], check=True, cwd=ROOT, env=env)
    data = json.loads(out.read_text())
    m = Measured(**data)
    if m.rc != 0:
        tail = log.read_text(errors="replace")[-3000:]
        print(f"!! {name} exited {m.rc}; last lines of {log}:\n{tail}", file=sys.stderr)
    return m


# -- nginx ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def ensure_nginx() -> None:
    if Path(NGINX).exists() and Path(ECHO_MODULE).exists():
        return
    packages = ["nginx", "libnginx-mod-http-echo"]
    print(f"nginx missing: apt-get install -y {' '.join(packages)}", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "install", "-y", "-q", *packages], check=True, env=env)


class Nginx:
    """Our own nginx (never the system's): our config, our prefix, 127.0.0.1 only."""

    def __init__(
        self, prefix: Path, sites_conf: Path, port: int, *, log: bool = False, hold: bool = True
    ) -> None:
        """``log``: an access log with timings, and (``hold``) every response held back
        SLOW s (nginx's echo module) so that requests that overlap show in the log."""
        self.prefix, self.port = prefix, port
        self.access_log = prefix / "access.log"
        for sub in ("logs", "tmp"):
            (prefix / sub).mkdir(parents=True, exist_ok=True)
        temp = "".join(
            f"    {kind}_temp_path {prefix / 'tmp' / kind};\n"
            for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        logging = (
            "    log_format timing '$host\\t$msec\\t$request_time\\t$status\\t$request_uri"
            "\\t$http_user_agent';\n"
            f"    access_log {self.access_log} timing buffer=256k flush=1s;\n"
            if log
            else "    access_log off;\n"
        )
        user = "user root;\n" if os.geteuid() == 0 else ""
        if log and hold:
            user += f"load_module {ECHO_MODULE};\n"
            slow = sites_conf.with_name("nginx-slow.conf")
            plain = "    location / {\n        try_files $uri $uri/index.html =404;\n    }\n"
            held = (
                f"    location / {{\n        echo_sleep {SLOW};\n        echo_exec @file;\n    }}\n"
                f"    location @file {{\n        try_files $uri $uri/index.html =404;\n    }}\n"
            )
            text = sites_conf.read_text()
            if "echo_sleep" not in text:  # a web that holds its responses itself is kept
                if plain not in text:
                    raise RuntimeError(f"unexpected layout of {sites_conf}")
                slow.write_text(text.replace(plain, held))
                sites_conf = slow
        self.conf = prefix / "nginx.conf"
        self.conf.write_text(
            f"daemon off;\n{user}worker_processes 1;\nworker_rlimit_nofile 65536;\n"
            f"pid {prefix / 'nginx.pid'};\n"
            f"error_log {prefix / 'logs' / 'error.log'} warn;\n"
            "events { worker_connections 8192; }\n"
            "http {\n"
            "    include /etc/nginx/mime.types;\n"
            "    default_type application/octet-stream;\n"
            f"{logging}{temp}"
            "    sendfile on;\n    tcp_nopush on;\n    tcp_nodelay on;\n"
            "    keepalive_timeout 300s;\n    keepalive_requests 1000000;\n"
            "    server_names_hash_max_size 8192;\n    server_names_hash_bucket_size 128;\n"
            f"    include {sites_conf};\n"
            "}\n"
        )
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Nginx:
        errors = self.prefix / "logs" / "error.log"
        self.proc = subprocess.Popen(
            [NGINX, "-p", str(self.prefix), "-c", str(self.conf), "-e", str(errors)],
            stdin=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nginx exited {self.proc.returncode}: {errors.read_text()}")
            with contextlib.suppress(OSError), socket.create_connection((LOOPBACK, self.port), 1):
                return self
            time.sleep(0.05)
        raise RuntimeError("nginx did not start listening")

    def usage(self) -> tuple[float, int]:
        """(CPU seconds of nginx so far, lines in its error log): compare before and after."""
        psutil: Any = importlib.import_module("psutil")
        cpu = 0.0
        if self.proc is not None:
            master = psutil.Process(self.proc.pid)
            for p in [master, *master.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    t = p.cpu_times()
                    cpu += t.user + t.system
        errors = self.prefix / "logs" / "error.log"
        lines = len(errors.read_text(errors="replace").splitlines()) if errors.exists() else 0
        return cpu, lines

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM: fast shutdown (flushes the access log)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def http_get(port: int, host: str, path: str) -> tuple[int, bytes]:
    with socket.create_connection((LOOPBACK, port), 5) as s:
        s.sendall(f"GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


# -- the web -------------------------------------------------------------------------


@dataclass
class Web:
    root: Path
    port: int
    hosts: list[str]  # in scope
    left_out: dict[str, str]
    disallow: dict[str, tuple[str, ...]]
    pages: set[str]  # every in-scope page URL that some page links to
    orphans: int  # in-scope pages that no page links to (a shop's colour facets)
    seeds_file: Path
    hosts_file: Path
    resolve_file: Path
    sites_conf: Path


def page_bytes(text: str) -> tuple[int, int]:
    """``LOW,HIGH``: the sample web's page sizes in bytes (``SampleWeb``'s ``page_bytes``)."""
    low, _, high = text.partition(",")
    try:
        return int(low), int(high)
    except ValueError:
        raise argparse.ArgumentTypeError(f"LOW,HIGH in bytes, not {text!r}") from None


def build_web(
    root: Path,
    hosts: int,
    pages: int,
    seed: int,
    *,
    quiet: bool = False,
    sizes: tuple[int, int] = PAGE_BYTES,
) -> Web:
    from trawl.testing.sampleweb import SampleWeb

    sample = SampleWeb(hosts, pages, seed, page_bytes=sizes)
    left_out: dict[str, str] = {}
    for host in sample.hosts:
        delay = sample.plan(host).crawl_delay
        if delay:
            left_out[host] = (
                f"Crawl-delay {delay}: {pages} pages would take at least "
                f"{delay * (pages - 1)} s on one host"
            )
    scope = [h for h in sample.hosts if h not in left_out]
    port = free_port()
    started = time.monotonic()
    root.mkdir(parents=True, exist_ok=True)
    sites_conf = sample.write_static(root / "web", port=port)
    web_bytes = sum(p.stat().st_size for p in (root / "web").rglob("index.html"))
    if not quiet:
        print(
            f"web: {hosts} hosts x {pages} pages of {sizes[0]:,} to {sizes[1]:,} bytes, "
            f"seed {seed}, {web_bytes / 1e9:.2f} GB of "
            f"HTML, written in {time.monotonic() - started:.0f} s to {root / 'web'}"
        )
    # nginx workers run as another user unless we are root; let them read the files.
    for d in (root, root / "web"):
        d.chmod(0o755)
    disallow = {h: sample.plan(h).disallow for h in scope if sample.plan(h).disallow}
    # SampleWeb's colour-facet pages exist but no page links to them: no crawler can
    # find them, so they are not counted as pages to be fetched.
    specs = [(h, spec) for h in scope for spec in sample.plan(h).pages.values()]
    page_urls = {sample.url(h, spec.path, port=port) for h, spec in specs if spec.kind != "facet"}
    orphans = sum(1 for _, spec in specs if spec.kind == "facet")
    seeds_file, hosts_file, resolve_file = (
        root / "seeds.txt",
        root / "hosts.txt",
        root / "hosts.map",
    )
    seeds_file.write_text("".join(sample.url(h, "/", port=port) + "\n" for h in scope))
    hosts_file.write_text("".join(h + "\n" for h in scope))
    resolve_file.write_text("".join(f"{h}={LOOPBACK}\n" for h in sample.hosts))
    return Web(
        root,
        port,
        scope,
        left_out,
        disallow,
        page_urls,
        orphans,
        seeds_file,
        hosts_file,
        resolve_file,
        sites_conf,
    )


def disallowed(url: str, disallow: dict[str, tuple[str, ...]]) -> bool:
    parts = urlsplit(url)
    return any(parts.path.startswith(p) for p in disallow.get(parts.hostname or "", ()))


# -- the crawlers --------------------------------------------------------------------


def trawl_cmd(web: Web, data: Path, *extra: str) -> list[str]:
    cmd = [sys.executable, "-m", "trawl", "crawl", "--seeds", str(web.seeds_file)]
    cmd += ["--data", str(data), "--delay", "0", "--allow-network", "127.0.0.0/8"]
    cmd += ["--resolve-file", str(web.resolve_file), "--scope", "allowlist"]
    for host in web.hosts:
        cmd += ["--allow-host", host]
    return [*cmd, "--quiet", *extra]


def show_cmd(cmd: Sequence[str]) -> str:
    out: list[str] = []
    hosts = 0
    for i, arg in enumerate(cmd):
        if arg == "--allow-host" or (i and cmd[i - 1] == "--allow-host"):
            hosts += arg != "--allow-host"
            continue
        out.append(arg)
    if hosts:
        out.append(f"--allow-host HOST (x{hosts}, every host of {{hosts.txt}})")
    return " ".join(out)


def ensure_scrapy_env() -> Path:
    python = SCRAPY_ENV / "bin" / "python"
    if (
        python.exists()
        and subprocess.run([python, "-c", "import scrapy"], check=False).returncode == 0
    ):
        return python
    print(f"making {SCRAPY_ENV} (python -m venv; pip install scrapy)", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(SCRAPY_ENV)], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", "scrapy"], check=True)
    return python


def scrapy_cmd(python: Path, web: Web, out: Path, concurrency: int, timeout: float) -> list[str]:
    return [
        str(python),
        str(SPIDER),
        "--seeds",
        str(web.seeds_file),
        "--hosts",
        str(web.hosts_file),
        "--feed",
        str(out / "items.jsonl"),
        "--responses",
        str(out / "responses.tsv"),
        "--stats",
        str(out / "stats.json"),
        "--port",
        str(web.port),
        "--concurrency",
        str(concurrency),
        "--timeout",
        str(timeout),
    ]


def trawl_stats(data: Path) -> tuple[dict[str, Any], dict[str, tuple[str, str]]]:
    base = [sys.executable, "-m", "trawl", "stats", "--data", str(data)]
    stats = json.loads(subprocess.run([*base, "--json"], check=True, capture_output=True).stdout)
    listing = subprocess.run([*base, "--urls"], check=True, capture_output=True, text=True).stdout
    states: dict[str, tuple[str, str]] = {}
    for line in listing.splitlines():
        status, reason, url = line.split("\t", 2)
        states[url] = (status, reason)
    return stats, states


@dataclass
class Result:
    name: str
    m: Measured
    pages: int  # HTML pages fetched with status 200
    requests: int  # every HTTP response (robots.txt and 404s included)
    notes: list[str] = field(default_factory=list)
    data: Path | None = None  # trawl's data directory


# Other trawl runs to compare with the default one (--trawl-variants): name -> flags.
VARIANTS = {
    "no-links": ("--no-link-graph",),
    "depth": ("--priority", "depth"),
    "depth-no-links": ("--priority", "depth", "--no-link-graph"),  # as before issue 12
    "no-index": ("--no-index",),  # no search index kept up (text for training)
}


def src_env(src: Path | None) -> dict[str, str] | None:
    """The environment that runs trawl from ``src`` (another checkout's ``src``
    directory, ahead of this venv's own) instead of this one."""
    if src is None:
        return None
    return {**os.environ, "PYTHONPATH": str(src.resolve())}


def run_trawl(
    web: Web,
    work: Path,
    timeout: float,
    variant: str = "",
    *,
    tag: str = "",
    src: Path | None = None,
) -> tuple[Result, str]:
    """One trawl crawl of ``web``; ``src``: with that checkout's code (``--before``)."""
    name = " ".join(x for x in ("trawl", variant, tag) if x)
    data = work / ("trawl-data" + "".join(f"-{x.replace(' ', '-')}" for x in (variant, tag) if x))
    cmd = trawl_cmd(web, data, "--max-duration", str(timeout), *VARIANTS.get(variant, ()))
    assert not variant or variant in VARIANTS
    print(f"\n$ {'PYTHONPATH=' + str(src) + ' ' if src else ''}{show_cmd(cmd)}", flush=True)
    m = measure(cmd, work, name.replace(" ", "-"), env=src_env(src))
    stats, states = trawl_stats(data)
    statuses: dict[str, int] = stats["http statuses"]
    fetched = {u for u, (s, _) in states.items() if s in ("fetched", "parsed")}
    ok_pages = {u for u in fetched if u in web.pages}
    counters = stats["counters"]
    robots = sum(v for k, v in counters.items() if k.startswith("robots:"))
    r = Result(name, m, statuses.get("200", 0), sum(statuses.values()) + robots, data=data)
    bad = sorted(u for u in fetched if disallowed(u, web.disallow))
    skipped_robots = sum(1 for s, why in states.values() if s == "skipped" and why == "robots")
    missing = web.pages - ok_pages
    r.notes += [
        f"urls known {stats['urls known']:,}; by status "
        + ", ".join(f"{k} {v:,}" for k, v in stats["urls"].items() if v),
        f"http statuses {statuses}; robots.txt fetches {robots}; documents {stats['documents']:,}"
        f"; duplicates {counters.get('parse:duplicate', 0):,}; parse backlog "
        f"{stats['parse backlog']}; errors {stats['errors'] or 'none'}",
        f"pages of the web fetched {len(ok_pages):,} of {len(web.pages):,}"
        + (f" (missing e.g. {sorted(missing)[:3]})" if missing else ""),
        f"robots: {skipped_robots:,} URLs skipped for robots; fetched under a Disallow path: "
        f"{len(bad)}" + (f" e.g. {bad[:3]}" if bad else ""),
        "files: "
        + ", ".join(
            f"{sub} {_du(data / sub) / 1e6:,.0f} MB"
            for sub in ("warc", "text")
            if (data / sub).exists()
        )
        + f", state.db {_du(data, 'state.db*') / 1e6:,.0f} MB",
    ]
    if (data / "links").exists():
        r.notes.append(link_graph_cost(data, work / f"{name.replace(' ', '-')}-links"))
    return r, show_cmd(cmd)


def _variants(text: str) -> list[str]:
    names = [v for v in text.split(",") if v]
    unknown = [v for v in names if v not in VARIANTS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown variant {unknown[0]!r}: {', '.join(VARIANTS)}")
    if len(set(names)) < len(names):
        # A variant's run keeps its data directory by its name: a second would resume
        # the first's crawl (nothing left to fetch) and fail at its link export.
        raise argparse.ArgumentTypeError("each variant once (run the bench again to repeat)")
    return names


def link_graph_cost(data: Path, out: Path) -> str:
    """What the link graph takes on disk, per page and per link (its export counts them)."""
    cmd = [sys.executable, "-m", "trawl", "export", "--links", "--data", str(data)]
    subprocess.run([*cmd, "--out", str(out)], check=True, capture_output=True)
    manifest = json.loads((out / "_manifest.json").read_text())
    size = _du(data / "links")
    pages, links = manifest["pages"], manifest["links"]
    return (
        f"link graph: {size / 1e6:,.2f} MB for {links:,} links of {pages:,} pages: "
        f"{size / max(1, pages):,.0f} bytes per page, {size / max(1, links):.2f} per link "
        f"(Parquet export {_du(out, '*.parquet') / max(1, links):.2f} bytes per link)"
    )


def _du(path: Path, pattern: str = "*") -> int:
    return sum(p.stat().st_size for p in path.glob(pattern) if p.is_file())


def run_scrapy(
    python: Path, web: Web, work: Path, concurrency: int, timeout: float
) -> tuple[Result, str]:
    out = work / "scrapy-out"
    out.mkdir()
    cmd = scrapy_cmd(python, web, out, concurrency, timeout)
    print(f"\n$ {' '.join(cmd)}", flush=True)
    m = measure(cmd, work, "scrapy")
    stats = json.loads((out / "stats.json").read_text()) if (out / "stats.json").exists() else {}
    responses = [ln.split("\t", 1) for ln in (out / "responses.tsv").read_text().splitlines()]
    items = 0
    item_urls: set[str] = set()
    text_bytes = 0
    with (out / "items.jsonl").open("rb") as f:
        for line in f:
            item = json.loads(line)
            items += 1
            item_urls.add(item["url"])
            text_bytes += len(item["text"])
    codes = Counter(code for code, _ in responses)
    ok_pages = {u for code, u in responses if code == "200" and u in web.pages}
    fetched = {u for _, u in responses}
    bad = sorted(u for u in fetched | item_urls if disallowed(u, web.disallow))
    missing = web.pages - ok_pages
    r = Result(
        "Scrapy",
        m,
        sum(1 for c, u in responses if c == "200" and not u.endswith("/robots.txt")),
        len(responses),
    )
    r.notes += [
        f"responses {dict(codes)}; items {items:,} ({text_bytes / 1e6:,.0f} MB of text); "
        f"finish reason {stats.get('finish_reason')}",
        f"pages of the web fetched {len(ok_pages):,} of {len(web.pages):,}"
        + (f" (missing e.g. {sorted(missing)[:3]})" if missing else ""),
        f"robots: robotstxt/forbidden {stats.get('robotstxt/forbidden', 0):,}; fetched under a "
        f"Disallow path: {len(bad)}" + (f" e.g. {bad[:3]}" if bad else ""),
        f"errors: {stats.get('log_count/ERROR', 0)} logged; exceptions "
        + str(
            {
                k[len("downloader/exception_type_count/") :]: v
                for k, v in stats.items()
                if k.startswith("downloader/exception_type_count/")
            }
            or "none"
        ),
    ]
    return r, " ".join(cmd)


# -- the table ---------------------------------------------------------------------------


def table(results: list[Result]) -> str:
    rows: list[tuple[str, ...]] = [
        ("", *(r.name for r in results)),
        ("pages (200 HTML)", *(f"{r.pages:,}" for r in results)),
        ("HTTP responses", *(f"{r.requests:,}" for r in results)),
        ("wall s", *(f"{r.m.wall:,.1f}" for r in results)),
        ("pages/s (wall)", *(f"{r.pages / r.m.wall:,.0f}" for r in results)),
        (
            "CPU s (user+sys)",
            *(f"{r.m.cpu:,.1f} ({r.m.user:,.0f}+{r.m.system:,.0f})" for r in results),
        ),
        ("CPU s / wall s", *(f"{r.m.cpu / r.m.wall:.2f}" for r in results)),
        ("CPU s / 1,000 pages", *(f"{1000 * r.m.cpu / max(1, r.pages):.2f}" for r in results)),
        ("pages / CPU s", *(f"{r.pages / r.m.cpu:,.0f}" for r in results)),
        ("peak RSS, tree sum", *(f"{r.m.peak_rss_sum / 2**20:,.0f} MiB" for r in results)),
        ("peak RSS, one process", *(f"{r.m.max_rss_one / 2**20:,.0f} MiB" for r in results)),
        ("processes (peak)", *(str(r.m.peak_procs) for r in results)),
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    )


def cpu_per_1k(r: Result) -> float:
    return 1000 * r.m.cpu / max(1, r.pages)


def before_after(trawls: list[Result]) -> list[str]:
    """CPU-s per 1,000 pages of each before/after pair (run back to back) and their ratio."""
    before = [r for r in trawls if " before " in r.name]
    after = [r for r in trawls if " after " in r.name]
    out = ["CPU-s per 1,000 pages (process tree), before -> after, each pair back to back:"]
    for b, a in zip(before, after, strict=False):
        out.append(
            f"  {b.name.split()[-1]}: {cpu_per_1k(b):.2f} -> {cpu_per_1k(a):.2f} "
            f"(after / before {cpu_per_1k(a) / cpu_per_1k(b):.3f}; pages {b.pages:,} / {a.pages:,})"
        )
    if before and after:
        mb = sum(map(cpu_per_1k, before)) / len(before)
        ma = sum(map(cpu_per_1k, after)) / len(after)
        out.append(f"  mean: {mb:.2f} -> {ma:.2f} (after / before {ma / mb:.3f})")
    return out


def outputs_check(trawls: list[Result], work: Path, before: Path | None, web: Web) -> list[str]:
    """bench/_outputs.py's checks: every trawl run's outputs against the first run's;
    with ``before``, the parses and the rebuilt index of the first run's data by both
    builds."""
    first, *rest = trawls
    assert first.data is not None
    reference = _outputs.crawl_outputs(first.data, work)
    out = [
        f"outputs of {first.name}: {len(reference['states']):,} URLs, "
        f"{len(reference['documents']):,} documents, {len(_outputs.QUERIES)} queries "
        f"({sum(h['total'] for h in reference['hits'].values()):,} hits)"
    ]
    for r in rest:
        assert r.data is not None
        diff = _outputs.differences(reference, _outputs.crawl_outputs(r.data, work))
        out.append(f"  {r.name} against {first.name}: " + ("the same" if not diff else ""))
        out += [f"    {line}" for line in diff]
    if before is None:
        return out
    builds = {"before": src_env(before), "after": None}
    parses = {
        name: _outputs.parse_digests(first.data, work / f"parses-{name}.json", env)
        for name, env in builds.items()
    }
    diff = _outputs.differences(parses["before"], parses["after"])
    out.append(
        f"parses of the {len(parses['before']['pages']):,} pages of {first.name}'s WARC, "
        f"before and after: " + ("the same" if not diff else "")
    )
    out += [f"    {line}" for line in diff]
    index = {name: _outputs.index_hits(first.data, work, name, env) for name, env in builds.items()}
    diff = _outputs.differences(index["before"], index["after"])
    out.append(
        f"index of {first.name}'s documents rebuilt by each build, {len(_outputs.QUERIES)} "
        "queries: " + ("the same hits" if not diff else "")
    )
    out += [f"    {line}" for line in diff]
    return out


# -- politeness check ------------------------------------------------------------------


def politeness_check(
    work: Path, hosts: int, pages: int, seed: int, python: Path | None, concurrency: int
) -> list[str]:
    web = build_web(work / "check", hosts, pages, seed, quiet=True)
    out: list[str] = [
        f"politeness web: {hosts} hosts x {pages} pages (seed {seed}), {len(web.hosts)} in "
        f"scope; nginx access log on, every response held {SLOW * 1000:.0f} ms"
    ]
    with Nginx(work / "check" / "nginx", web.sites_conf, web.port, log=True) as nginx:
        cmds = [("trawl", trawl_cmd(web, work / "check" / "trawl-data"))]
        if python is not None:
            sout = work / "check" / "scrapy-out"
            sout.mkdir()
            cmds.append(("Scrapy", scrapy_cmd(python, web, sout, concurrency, 0)))
        for name, cmd in cmds:
            m = measure(cmd, work / "check", name)
            out.append(f"  {name}: exit {m.rc}, {m.wall:.1f} s wall")
    rows = [ln.split("\t") for ln in nginx.access_log.read_text().splitlines()]
    by: dict[tuple[str, str], list[tuple[float, float, str, str]]] = defaultdict(list)
    for host, msec, rtime, status, uri, agent in rows:
        who = "trawl" if "trawl/" in agent else "Scrapy" if "benchbot" in agent else agent
        end = float(msec)
        by[(who, host)].append((end - float(rtime), end, uri, status))
    for who in ("trawl", "Scrapy"):
        keys = [k for k in by if k[0] == who]
        if not keys:
            continue
        n = overlaps = robots_late = bad = out_of_scope = 0
        worst = 0.0
        longest = 0.0
        for key in keys:
            reqs = sorted(by[key])
            n += len(reqs)
            if key[1] not in web.hosts:
                out_of_scope += len(reqs)
            if reqs[0][2] != "/robots.txt":
                robots_late += 1
            for (_, prev_end, _, _), (start, _, _, _) in itertools.pairwise(reqs):
                # $msec and $request_time are in ms: 2 ms of slack for rounding (every
                # request takes SLOW s, so two requests in flight overlap by more).
                if start < prev_end - 0.002:
                    overlaps += 1
                    worst = max(worst, prev_end - start)
            longest = max([longest, *(e - s for s, e, _, _ in reqs)])
            bad += sum(
                1
                for _, _, uri, _ in reqs
                if any(uri.startswith(p) for p in web.disallow.get(key[1], ()))
            )
        out.append(
            f"  {who}: {n:,} requests to {len(keys)} hosts; per-host overlapping requests: "
            f"{overlaps} (worst {worst * 1000:.0f} ms; longest request {longest * 1000:.0f} ms); "
            f"hosts whose first request was not robots.txt: {robots_late}; requests under a "
            f"Disallow path: {bad}; to hosts out of scope: {out_of_scope}"
        )
    return out


# -- profile -----------------------------------------------------------------------------


def profile(web: Web, work: Path, pages: int, rate: int, scrapy: Path | None = None) -> list[str]:
    """Sample a crawl of ``pages`` pages with py-spy (trawl, or Scrapy with ``scrapy``, the
    bench env's Python): top functions by self time per process kind. py-spy leaves out
    idle threads (waiting in a system call) unless told otherwise, so the shares are of
    on-CPU samples."""
    spy = Path(sys.executable).parent / "py-spy"
    if not spy.exists():
        return ["profile: py-spy not installed in this venv (pip install py-spy); skipped"]
    name = "trawl" if scrapy is None else "scrapy"
    raw = work / f"profile-{name}.txt"
    if scrapy is None:
        cmd = trawl_cmd(web, work / "profile-data", "--max-pages", str(pages))
    else:
        out = work / "profile-scrapy"
        out.mkdir()
        cmd = [*scrapy_cmd(scrapy, web, out, 300, 0), "--max-pages", str(pages)]
    spy_cmd = [str(spy), "record", "--subprocesses", "--function", "--format", "raw"]
    spy_cmd += ["--rate", str(rate), "--output", str(raw), "--", *cmd]
    print(f"\n$ {show_cmd(spy_cmd)}", flush=True)
    started = time.monotonic()
    subprocess.run(spy_cmd, check=True, cwd=ROOT, capture_output=True)
    wall = time.monotonic() - started
    head = f"profile of {name}: {pages:,} pages, {wall:.0f} s wall, py-spy at {rate} Hz"
    return [head, *top_self(raw)]


_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*)\)$")


def split_stack(stack: str) -> tuple[str, list[str]]:
    """py-spy's raw stack as its processes and its frames: with ``--subprocesses`` a
    stack begins with a ``process PID:"command line"`` frame for the traced process and
    one for each descendant down to the sampled one. A command line may hold ``;`` (the
    parse workers' ``-c`` line of the builds 472fd65 to 2b0e7da did), so a process
    frame ends at its closing quote. The processes come back joined by ``;``."""
    processes: list[str] = []
    rest = stack
    while rest.startswith("process "):
        end = rest.find('";')
        if end < 0:
            return ";".join([*processes, rest]), []
        processes.append(rest[: end + 1])
        rest = rest[end + 2 :]
    return ";".join(processes), rest.split(";")


def process_kind(process: str, frames: list[str]) -> str:
    """Which process of a crawl a py-spy stack is from (``process`` and ``frames`` as
    ``split_stack`` gives them): the crawler itself (py-spy may read its command line
    as ""), a parse worker, or (builds before the workers were started by
    ``subprocess``) the forkserver that started them and multiprocessing's resource
    tracker."""
    if "trawl.parse.worker" in process:
        return "parse worker"
    if "resource_tracker" in process:
        return "resource tracker"
    if "forkserver" in process:
        return "parse worker" if any("_serve_one" in f for f in frames) else "forkserver"
    return "crawler"


def top_self(raw: Path, n: int = 10) -> list[str]:
    """Top functions by self samples, per process kind, from py-spy's raw output."""
    per: dict[str, Counter[str]] = defaultdict(Counter)
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        process, frames = split_stack(stack)
        kind = process_kind(process, frames)
        leaf = frames[-1] if frames else "(no Python frame on the stack)"
        match = _FRAME.match(leaf)
        if match:
            file = match["file"].split(":")[0]
            file = re.sub(r"^.*/(site-packages|src|lib/python3\.\d+)/", "", file)
            leaf = f"{match['func']} ({file})"
        per[kind][leaf] += int(count)
    lines = []
    for kind in ("crawler", "parse worker"):
        samples = per.get(kind)
        if not samples:
            continue
        total = sum(samples.values())
        lines.append(f"  {kind}: {total:,} samples; top {n} by self time:")
        for func, k in samples.most_common(n):
            lines.append(f"    {100 * k / total:5.1f} %  {func}")
    return lines


# -- main ------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--hosts", type=int, default=300)
    p.add_argument("--pages", type=int, default=100, help="pages per host")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--page-bytes",
        type=page_bytes,
        default=PAGE_BYTES,
        metavar="LOW,HIGH",
        help="page sizes of the web (15000,20000: pages of about 12 KB of text)",
    )
    p.add_argument("--concurrency", type=int, default=300, help="Scrapy CONCURRENT_REQUESTS")
    p.add_argument("--timeout", type=float, default=1800, help="limit per crawl, seconds")
    p.add_argument("--skip-trawl", action="store_true")
    p.add_argument(
        "--trawl-variants",
        type=_variants,
        default=[],
        metavar="V,V",
        help=f"more trawl runs to compare, after the default one: {', '.join(VARIANTS)}",
    )
    p.add_argument(
        "--before",
        type=Path,
        metavar="SRC",
        help="another checkout's src/ (the build before a change): its crawl and this "
        "one's alternate on the same web, --repeat times",
    )
    p.add_argument("--repeat", type=int, default=1, help="trawl runs (pairs with --before)")
    p.add_argument(
        "--outputs",
        action="store_true",
        help="compare what every trawl run kept (URL outcomes, documents, index hits) with "
        "the first run's",
    )
    p.add_argument("--skip-scrapy", action="store_true")
    p.add_argument("--skip-politeness", action="store_true")
    p.add_argument("--skip-profile", action="store_true", help="no py-spy profile of trawl")
    p.add_argument("--profile-scrapy", action="store_true", help="py-spy profile of Scrapy too")
    p.add_argument("--check-hosts", type=int, default=16, help="hosts of the politeness web")
    p.add_argument("--check-pages", type=int, default=40, help="pages per host there")
    p.add_argument("--profile-pages", type=int, default=10_000)
    p.add_argument("--profile-rate", type=int, default=100, help="py-spy samples per second")
    p.add_argument("--out", type=Path, help="work here (default: a temp dir)")
    p.add_argument("--keep", action="store_true", help="keep the web and outputs")
    args = p.parse_args(argv)
    ensure_nginx()
    python = None if args.skip_scrapy else ensure_scrapy_env()
    work = Path(tempfile.mkdtemp(prefix="trawl-bench-", dir=args.out))
    try:
        return _run(args, work, python)
    finally:
        if args.keep:
            print(f"\nkept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def _run(args: argparse.Namespace, work: Path, python: Path | None) -> int:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {os.cpu_count()} cores, load average {load}; python {sys.version.split()[0]}")
    if python is not None:
        version = subprocess.run(
            [
                python,
                "-c",
                "import scrapy, twisted; print(scrapy.__version__, twisted.__version__)",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        print(f"Scrapy {version[0]}, Twisted {version[1]} in {SCRAPY_ENV}")
    print(f"work dir {work}")
    web = build_web(work, args.hosts, args.pages, args.seed, sizes=args.page_bytes)
    for host, why in web.left_out.items():
        print(f"left out of seeds and scope: {host} ({why})")
    print(
        f"in scope: {len(web.hosts)} hosts, {len(web.pages):,} linked pages (and {web.orphans} "
        f"colour-facet pages no page links to); {len(web.disallow)} hosts "
        f"disallow {sorted({p for v in web.disallow.values() for p in v})}"
    )
    results: list[Result] = []
    commands: list[str] = []
    with Nginx(work / "nginx", web.sites_conf, web.port) as nginx:
        code, body = http_get(nginx.port, web.hosts[0], "/")
        print(
            f"nginx on {LOOPBACK}:{web.port}: GET http://{web.hosts[0]}/ -> {code}, "
            f"{len(body):,} bytes"
        )
        runs: list[Any] = []
        if not args.skip_trawl:
            paired = args.before is not None or args.repeat > 1
            for i in range(1, args.repeat + 1):
                if args.before is not None:
                    before = f"before {i}"
                    runs.append(
                        lambda t=before: run_trawl(web, work, args.timeout, tag=t, src=args.before)
                    )
                after = f"after {i}" if args.before is not None else f"#{i}" if paired else ""
                runs.append(lambda t=after: run_trawl(web, work, args.timeout, tag=t))
            for variant in args.trawl_variants:
                runs.append(lambda v=variant: run_trawl(web, work, args.timeout, v))
        if python is not None:
            runs.append(lambda: run_scrapy(python, web, work, args.concurrency, args.timeout))
        for run in runs:
            cpu0, errors0 = nginx.usage()
            r, c = run()
            cpu1, errors1 = nginx.usage()
            r.notes.append(
                f"nginx meanwhile: {cpu1 - cpu0:.1f} CPU s ({(cpu1 - cpu0) / r.m.wall:.2f} of a "
                f"core), {errors1 - errors0} new error-log lines"
            )
            results.append(r)
            commands.append(c)
        print("\n== results (one run, same web, back to back)\n")
        print(table(results))
        for r in results:
            print(f"\n{r.name}:")
            for note in r.notes:
                print(f"  {note}")
            share = ", ".join(
                f"{role} {cpu:,.1f} s ({r.m.processes_by_role.get(role, 0)} proc)"
                for role, cpu in sorted(r.m.sampled_cpu_by_role.items(), key=lambda kv: -kv[1])
            )
            print(f"  CPU by process (psutil samples, approx.): {share}")
            print(
                f"  both cores used: {'yes' if r.m.cpu / r.m.wall > 1 else 'no'} "
                f"({r.m.cpu / r.m.wall:.2f} CPU s per wall s)"
            )
        trawls = [r for r in results if r.name.startswith("trawl")]
        if args.before is not None:
            print("\n" + "\n".join(before_after(trawls)))
        if args.outputs and trawls:
            print("\n" + "\n".join(outputs_check(trawls, work, args.before, web)))
        if len(trawls) > 1 and all(r.pages for r in trawls) and args.before is None:
            base = trawls[0]
            for r in trawls[1:]:
                ratio = (1000 * base.m.cpu / base.pages) / (1000 * r.m.cpu / r.pages)
                print(f"\nCPU s per 1,000 pages, trawl / {r.name}: {ratio:.3f}")
        scrapy = [r for r in results if r.name == "Scrapy"]
        # Against each build's first run (with --before: the build before and this one).
        firsts = [r for r in trawls if re.search(r"(?<!\d)1$|\D$", r.name)]
        for t in firsts if scrapy and scrapy[0].pages else []:
            s = scrapy[0]
            if not t.pages:
                continue
            ratio = (t.pages / t.m.cpu) / (s.pages / s.m.cpu)
            wall_ratio = (t.pages / t.m.wall) / (s.pages / s.m.wall)
            print(
                f"\nratio {t.name} / Scrapy, pages per CPU-second: {ratio:.2f} (target >= 2)"
                f"\nratio {t.name} / Scrapy, pages per wall second: {wall_ratio:.2f}"
            )
        if not args.skip_profile and not args.skip_trawl:
            print()
            for line in profile(web, work, args.profile_pages, args.profile_rate):
                print(line)
        if args.profile_scrapy and python is not None:
            print()
            for line in profile(web, work, args.profile_pages, args.profile_rate, python):
                print(line)
    if not args.skip_politeness:
        print()
        for line in politeness_check(
            work, args.check_hosts, args.check_pages, args.seed, python, args.concurrency
        ):
            print(line)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--measure":
        sys.exit(measure_main(sys.argv[2:]))
    sys.exit(main())
