"""Where a host's time goes: ``trawl crawl`` run in-process with timing probes.

``python bench/_pacing_probe.py OUT.json -- crawl ARGS...`` runs ``trawl.cli.main`` with
a few functions wrapped (nothing in the package changes; the same probes fit any recent
trawl tree put first on ``PYTHONPATH``), then writes what it saw to OUT.json and
``bench_pacing.py --probe`` prints the breakdown. Per host, on the crawler's clock:

- ``send``: the HTTP client is called; ``resp``: it returned (the response is in);
  ``release``: the host's next ready time, and whether its queue still had work;
- ``sched``: a host whose queue had run dry gets work again (links admitted);
- ``pop``: the schedule hands the host out.

So a gap after a response splits into: time the host's queue was dry past its ready
time, lateness of the schedule hand-out past the ready time (run loop wake-up, a busy
event loop), and take-to-send time. Also the event loop's lag (a 5 ms sleeper), the
group commit's duration, each parse-apply step's duration, and the parse latency
(submit to result).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

events: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
samples: dict[str, list[float]] = defaultdict(list)


def _timed(owner: Any, name: str, key: str) -> None:
    original = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            samples[key].append(time.perf_counter() - t0)

    setattr(owner, name, wrapper)


def install() -> None:
    from trawl.crawl import Crawl
    from trawl.fetch.http import HttpClient
    from trawl.fetch.stage import FetchStage
    from trawl.parse.role import ParseRole
    from trawl.parse.stage import ParseStage
    from trawl.storage.schedule import HostSchedule

    pop, release, schedule = HostSchedule.pop, HostSchedule.release, HostSchedule.schedule

    def pop_probe(self: HostSchedule, now: float) -> str | None:
        host = pop(self, now)
        if host is not None:
            events[host].append(("pop", time.time()))
        return host

    def release_probe(
        self: HostSchedule, host: str, ready_at: float, *, has_work: bool, priority: int = 0
    ) -> None:
        events[host].append(("release", time.time(), ready_at, has_work))
        release(self, host, ready_at, has_work=has_work, priority=priority)

    def schedule_probe(self: HostSchedule, host: str, ready_at: float, priority: int = 0) -> None:
        if not self.is_busy(host) and host not in self:
            events[host].append(("sched", time.time(), ready_at))
        schedule(self, host, ready_at, priority)

    HostSchedule.pop = pop_probe  # type: ignore[method-assign]
    HostSchedule.release = release_probe  # type: ignore[method-assign]
    HostSchedule.schedule = schedule_probe  # type: ignore[method-assign]

    get = HttpClient.get

    async def get_probe(self: HttpClient, url: str, **kwargs: Any) -> Any:
        host = url.split("://", 1)[1].split("/", 1)[0]
        events[host].append(("send", time.time(), url.endswith("/robots.txt")))
        try:
            return await get(self, url, **kwargs)
        finally:
            events[host].append(("resp", time.time()))

    HttpClient.get = get_probe  # type: ignore[method-assign]

    response = FetchStage._response

    def response_probe(self: FetchStage, lease: Any, resp: Any, *args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return response(self, lease, resp, *args, **kwargs)
        finally:
            samples["fetch stage _response"].append(time.perf_counter() - t0)

    FetchStage._response = response_probe  # type: ignore[method-assign]

    from trawl.index.crawling import CrawlIndexing
    from trawl.storage.blobs import LogWriters
    from trawl.storage.sqlite.store import SqliteCrawlStore

    _timed(Crawl, "commit", "group commit")
    _timed(LogWriters, "sync", "group commit: logs synced")
    _timed(SqliteCrawlStore, "commit", "group commit: store committed")
    _timed(CrawlIndexing, "after_commit", "group commit: index told")

    from trawl.storage.sqlite.db import Database

    db_commit = Database.commit

    def db_commit_probe(self: Database) -> None:
        hooks, self._hooks = self._hooks, []
        t0 = time.perf_counter()
        for hook in hooks:
            hook()
        t1 = time.perf_counter()
        try:
            db_commit(self)
        finally:
            self._hooks = hooks
        samples["group commit: store hooks (counters, hosts)"].append(t1 - t0)
        samples["group commit: SQLite COMMIT"].append(time.perf_counter() - t1)

    Database.commit = db_commit_probe  # type: ignore[method-assign]

    steps = ParseStage._steps

    def steps_probe(self: ParseStage, *args: Any) -> Any:
        gen = steps(self, *args)
        while True:
            t0 = time.perf_counter()
            try:
                next(gen)
            except StopIteration as done:
                samples["parse apply step"].append(time.perf_counter() - t0)
                return done.value
            samples["parse apply step"].append(time.perf_counter() - t0)
            yield

    ParseStage._steps = steps_probe  # type: ignore[method-assign,assignment]

    submit, apply = ParseRole.submit, ParseRole._apply
    submitted: dict[int, float] = {}

    def submit_probe(self: ParseRole, task: Any) -> None:
        submitted[task.seq] = time.perf_counter()
        submit(self, task)

    async def apply_probe(self: ParseRole, seq: int, job: Any, page: Any) -> None:
        t0 = submitted.pop(seq, None)
        if t0 is not None:
            samples["parse latency (submit to result)"].append(time.perf_counter() - t0)
        await apply(self, seq, job, page)

    ParseRole.submit = submit_probe  # type: ignore[method-assign]
    ParseRole._apply = apply_probe  # type: ignore[method-assign, assignment]

    run = Crawl.run

    async def run_probe(self: Crawl) -> Any:
        async def lag() -> None:
            loop = asyncio.get_running_loop()
            cap = max(64, 32 * max(1, self.config.parse_workers))  # the run loop's backlog cap
            parsing = self.parsing
            while True:
                t0 = loop.time()
                await asyncio.sleep(0.005)
                took = loop.time() - t0
                samples["event loop lag (5 ms sleeper)"].append(took - 0.005)
                if parsing is not None and len(parsing.tasks) >= cap:
                    samples["time with the parse backlog at the run loop's cap"].append(took)

        monitor = asyncio.create_task(lag())
        try:
            return await run(self)
        finally:
            monitor.cancel()

    Crawl.run = run_probe  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    args = argv[2:] if argv[1:2] == ["--"] else argv[1:]
    install()
    from trawl.cli import main as trawl_main

    cpu0 = time.process_time()
    rc = trawl_main(args)
    data = {
        "rc": rc,
        "main_process_cpu": time.process_time() - cpu0,
        "events": events,
        "samples": samples,
    }
    out.write_text(json.dumps(data))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
