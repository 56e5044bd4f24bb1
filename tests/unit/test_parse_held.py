"""The parse role's pages held (trawl.parse.role): bodies and results counted against
the crawl's page budget until applied, which stops fetching while full; given back
whatever becomes of the page."""

from __future__ import annotations

import asyncio
import gc
from typing import Any, cast

from trawl.fetch.stage import ParseTask
from trawl.jobs import ParseJob
from trawl.memory import PageBytes
from trawl.models import Location
from trawl.parse.page import ParsedPage, ParseOptions
from trawl.parse.role import ParseRole, result_bytes


class Stage:
    """Applies a page once ``go`` is set (the event loop busy elsewhere)."""

    def __init__(self, fail: bool = False) -> None:
        self.go = asyncio.Event()
        self.applied: list[ParsedPage] = []
        self.fail = fail

    async def apply_async(self, seq: int, job: ParseJob, page: ParsedPage) -> None:
        await self.go.wait()
        if self.fail:
            raise RuntimeError("a bug in apply")
        self.applied.append(page)


class Counters:
    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def add(self, name: str, n: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + n


def _job(i: int) -> ParseJob:
    url = f"https://site.example/{i}"
    return ParseJob(
        host="site.example",
        fp=i,
        url=url,
        final_url=url,
        depth=1,
        fetched_at=0.0,
        status=200,
        headers=(("Content-Type", "text/html"),),
        content_type="text/html",
        warc=Location("warc-1", i * 100, 100),
    )


def _body(i: int, words: int) -> bytes:
    text = " ".join(f"word{i}x{j}" for j in range(words))
    return f"<html><body><article><p>{text}</p></article></body></html>".encode()


def _role(
    stage: Stage,
    held: PageBytes,
    errors: list[Exception],
    *,
    handled: bool = True,
    counters: Counters | None = None,
) -> ParseRole:
    def on_error(exc: Exception) -> bool:
        errors.append(exc)
        return handled  # True: dealt with (a full disk); False: raised again

    return ParseRole(
        stage=cast(Any, stage),
        sitemaps=cast(Any, None),
        options=ParseOptions(),
        workers=0,  # parsed in this process
        read_warc=lambda location: b"",
        max_body_bytes=1 << 20,
        counters=counters or Counters(),
        on_done=lambda: None,
        on_error=on_error,
        writable=lambda: True,
        page_bytes=held,
    )


async def test_pages_held_stop_fetching_until_applied() -> None:
    held = PageBytes(20_000)
    stage = Stage()
    errors: list[Exception] = []
    role = _role(stage, held, errors)
    role.start([])
    bodies = [_body(i, 300) for i in range(4)]  # some 3,000 bytes each
    role.submit(ParseTask(seq=1, job=_job(0), body=bodies[0]))
    # A page submitted counts its body, and as much again for its result to come.
    assert held.held == 2 * len(bodies[0])
    assert role.has_room()
    for i in range(1, 4):
        role.submit(ParseTask(seq=i + 1, job=_job(i), body=bodies[i]))
    assert held.held == 2 * sum(map(len, bodies)) and held.full
    assert not role.has_room()
    for _ in range(20):  # parsed (here, with no workers): each result counted as it is
        await asyncio.sleep(0)
    assert held.held > sum(map(len, bodies))
    stage.go.set()
    await asyncio.gather(*role.tasks)
    assert len(stage.applied) == 4 and errors == []
    assert held.held == 0 and role.has_room()
    assert all(result_bytes(p) >= len(p.text) > 0 for p in stage.applied)
    role.shutdown(wait=True)


async def test_pages_held_are_given_back_on_failure_and_cancel() -> None:
    held = PageBytes(1 << 20)
    stage = Stage(fail=True)
    errors: list[Exception] = []
    role = _role(stage, held, errors)
    role.start([])
    role.submit(ParseTask(seq=1, job=_job(1), body=_body(1, 100)))
    stage.go.set()
    await asyncio.gather(*role.tasks)
    assert [str(e) for e in errors] == ["a bug in apply"]
    assert held.held == 0
    stage.go.clear()
    role.submit(ParseTask(seq=2, job=_job(2), body=_body(2, 100)))
    role.submit(ParseTask(seq=3, job=_job(3), body=_body(3, 100)))
    await asyncio.sleep(0)
    assert held.held > 0
    await role.drop()  # a full disk: everything in flight cancelled
    assert held.held == 0
    role.shutdown(wait=True)


async def test_one_huge_page_counts_half_the_budget_at_most() -> None:
    # A page of a budget's size (a 10 MiB body on a 16 MiB budget: its body and its
    # result to come) does not stop fetching while it is parsed and admitted.
    held = PageBytes(20_000)
    stage = Stage()
    role = _role(stage, held, [])
    role.start([])
    role.submit(ParseTask(seq=1, job=_job(1), body=_body(1, 3_000)))  # some 30,000 bytes
    assert held.held == 10_000 and role.has_room()
    role.submit(ParseTask(seq=2, job=_job(2), body=_body(2, 3_000)))  # two such: full
    assert not role.has_room()
    stage.go.set()
    await asyncio.gather(*role.tasks)
    assert held.held == 0
    role.shutdown(wait=True)


async def test_an_error_no_one_handles_is_counted_and_said_once() -> None:
    # A store that failed (a Redis that does not answer), a bug: said by the parse
    # role with the page's error counted, not left to asyncio's "Task exception was
    # never retrieved" when the task is collected; the next pages go on.
    loop = asyncio.get_running_loop()
    unretrieved: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: unretrieved.append(context))
    counters = Counters()
    stage = Stage(fail=True)
    role = _role(stage, PageBytes(1 << 20), [], handled=False, counters=counters)
    role.start([])
    role.submit(ParseTask(seq=1, job=_job(1), body=_body(1, 100)))
    stage.go.set()
    await asyncio.wait(list(role.tasks))
    await asyncio.sleep(0)  # the done callbacks
    assert counters.counts.get("error:parse") == 1
    assert not role.tasks
    stage.fail = False
    role.submit(ParseTask(seq=2, job=_job(2), body=_body(2, 100)))
    await asyncio.wait(list(role.tasks))
    assert len(stage.applied) == 1
    gc.collect()  # where an unretrieved exception would be reported
    assert unretrieved == []
    role.shutdown(wait=True)
