"""Fetches under way in the crawl's page budget (trawl.fetch.role): each holds its
reserve until it ends, however it ends, so a budget bounds them by bytes, not only by
``max_in_flight``."""

from __future__ import annotations

import asyncio
import gc
from typing import Any, cast

from trawl.fetch.role import FetchRole
from trawl.memory import PageBytes
from trawl.models import Lease
from trawl.testing import FakeClock


class Stage:
    """Fetches that end when the test says so."""

    render = None

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.done: list[str] = []

    async def process(self, lease: Lease) -> None:
        await self.go.wait()
        self.done.append(lease.url)


class Counters:
    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def add(self, name: str, n: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + n


def _lease(i: int, clock: FakeClock) -> Lease:
    return Lease(
        fp=i,
        url=f"https://h{i}.example/",
        host=f"h{i}.example",
        depth=0,
        priority=0,
        attempts=0,
        expires=clock.now() + 600,
    )


def _role(
    held: PageBytes,
    stage: Stage,
    clock: FakeClock,
    *,
    frontier: object = None,
    counters: Counters | None = None,
) -> FetchRole:
    return FetchRole(
        stage=cast(Any, stage),
        frontier=cast(Any, frontier),
        counters=counters or Counters(),
        clock=clock,
        delay=0.0,
        hand_off=None,
        on_done=lambda: None,
        on_error=lambda exc: False,
        writable=lambda: True,
        monotonic=clock.now,
        page_bytes=held,
    )


async def test_fetches_under_way_fill_the_budget_by_their_reserve() -> None:
    clock = FakeClock()
    held = PageBytes(1000, reserve=300)
    stage = Stage()
    role = _role(held, stage, clock)
    started = 0
    while role.has_room(limit=512):  # far more than the bytes allow
        role.start(_lease(started, clock))
        started += 1
    assert started == 4 and held.held == 1200  # the fourth one found 900 < 1,000
    stage.go.set()
    await asyncio.gather(*role.tasks)
    await asyncio.sleep(0)  # the done callbacks
    assert len(stage.done) == 4 and held.held == 0 and role.has_room(limit=512)


async def test_a_fetch_cancelled_before_it_ran_gives_its_reserve_back() -> None:
    clock = FakeClock()
    held = PageBytes(1 << 20, reserve=300)
    stage = Stage()
    role = _role(held, stage, clock)
    role.start(_lease(1, clock))  # not run yet: no await since
    role.start(_lease(2, clock))
    assert held.held == 600
    await role.drop()  # a full disk: both cancelled at once
    await asyncio.sleep(0)
    assert stage.done == [] and held.held == 0


class Failing(Stage):
    async def process(self, lease: Lease) -> None:
        raise RuntimeError("a bug in a fetch step")


class GoneStore:
    """A frontier whose store does not answer: the failure cannot be recorded."""

    def finish(self, *args: object, **kwargs: object) -> None:
        raise ConnectionError("the store is gone")


async def test_an_error_no_one_handles_is_counted_and_said_once() -> None:
    loop = asyncio.get_running_loop()
    unretrieved: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: unretrieved.append(context))
    clock = FakeClock()
    counters = Counters()
    held = PageBytes(1 << 20, reserve=300)
    role = _role(held, Failing(), clock, frontier=GoneStore(), counters=counters)
    role.start(_lease(1, clock))
    await asyncio.wait(list(role.tasks))
    await asyncio.sleep(0)  # the done callbacks
    assert counters.counts.get("error:internal") == 1  # the bug, as before
    assert counters.counts.get("error:fetch") == 1  # its record failed too: said here
    assert held.held == 0
    gc.collect()  # where an unretrieved exception would be reported
    assert unretrieved == []
