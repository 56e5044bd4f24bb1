"""The rules for a browser's requests, on a fake client and a fake clock (no browser)."""

from __future__ import annotations

import asyncio
import ipaddress
from dataclasses import replace

import pytest

from trawl.config import Timeouts
from trawl.fetch.address import AddressGuard
from trawl.fetch.dns import DnsAnswer, DnsCache
from trawl.fetch.http import FetchError, FetchResponse, HttpClient
from trawl.fetch.politeness import Politeness
from trawl.fetch.render.gate import (
    MAX_REQUESTS,
    BrowserRequest,
    GateRules,
    PageGate,
    RenderGate,
)
from trawl.fetch.robots_cache import RobotsCache
from trawl.frontier.traps import ScopeFilter
from trawl.models import NewUrl, UrlStatus
from trawl.storage.memory import MemoryCrawlStore
from trawl.testing.clock import FakeClock
from trawl.testing.fakeclient import FakeClient, FakePage

PAGE = "http://app.example/page"
ROBOTS = FakePage(b"User-agent: *\nDisallow: /private/\n", 200, (("Content-Type", "text/plain"),))
JS = FakePage(b"render();", 200, (("Content-Type", "text/javascript"),))
JSON = FakePage(b'{"text": "hello"}', 200, (("Content-Type", "application/json"),))
DELAY = 1.0


class Web:
    """A gate over a fake client, a memory store and a fake clock."""

    def __init__(
        self,
        pages: dict[str, FakePage],
        *,
        other_hosts: tuple[str, ...] = (),
        client: object | None = None,
        deadline: float = 30.0,
    ) -> None:
        self.clock = FakeClock(1_000.0)
        self.store = MemoryCrawlStore()
        self.client = FakeClient(pages, clock=self.clock)
        self.robots = RobotsCache(self.store.robots)
        self.pace = Politeness(delay=DELAY, max_crawl_delay=30.0, max_backoff=60.0)
        self.gate = RenderGate(
            client=client or self.client,  # type: ignore[arg-type]
            robots=self.robots,
            politeness=self.pace,
            frontier=self.store.frontier,
            guard=AddressGuard([ipaddress.ip_network("192.0.2.0/24")]),
            counters=self.store.counters,
            clock=self.clock,
            rules=GateRules(
                agents=("trawl",),
                other_hosts=ScopeFilter("allowlist", allowed=other_hosts) if other_hosts else None,
                max_body_bytes=1024,
            ),
        )
        # The page's own robots.txt was read when the page was fetched.
        self.robots.record("http://app.example", status=200, body=ROBOTS.body, now=0.0)
        self.document = FetchResponse(
            url=PAGE,
            status=200,
            reason="OK",
            http_version="1.1",
            headers=(("Content-Type", "text/html"),),
            request_headers=(),
            raw_body=b"<div id=root></div>",
            body=b"<div id=root></div>",
            ip="192.0.2.1",
            mime_type="text/html",
            charset=None,
            truncated=None,
            body_skipped=False,
            started_at=1_000.0,
            first_byte_at=1_000.0,
            elapsed=0.0,
        )
        self.page = self.gate.for_page(
            PAGE,
            "app.example",
            self.document,
            ready_at=1_000.0 + DELAY,
            deadline=1_000.0 + deadline,
        )

    def times(self, host: str = "") -> list[float]:
        return [t for t, url in self.client.requests if host in url]


async def ask(gate: PageGate, url: str, **kw: object) -> str | None:
    answer = await gate.answer(BrowserRequest(url, **kw))  # type: ignore[arg-type]
    if answer.response is not None:
        return None
    return answer.refused


async def test_the_page_itself_is_the_fetched_response_once() -> None:
    web = Web({})
    answer = await web.page.answer(BrowserRequest(PAGE, resource_type="document", navigation=True))
    assert answer.response is web.document
    assert web.client.requests == []  # not fetched a second time
    again = await ask(web.page, PAGE, resource_type="document", navigation=True)
    assert again == "navigation away"
    assert await ask(web.page, "http://app.example/other", navigation=True) == "navigation away"


@pytest.mark.parametrize(
    ("request_kw", "why"),
    [
        ({"url": "http://app.example/api", "method": "POST"}, "method POST"),
        ({"url": "http://app.example/a.png", "resource_type": "image"}, "image not loaded"),
        ({"url": "http://app.example/f.woff", "resource_type": "font"}, "font not loaded"),
        ({"url": "http://app.example/v.mp4", "resource_type": "media"}, "media not loaded"),
        ({"url": "ws://app.example/ws", "resource_type": "websocket"}, "scheme ws"),
        ({"url": "http://127.0.0.1/x"}, "blocked address: loopback"),
        ({"url": "http://10.1.2.3/x"}, "blocked address: private"),
        ({"url": "http://[::1]:8080/x"}, "blocked address: loopback"),
        ({"url": "http://localhost/x"}, "blocked address: loopback"),
        ({"url": "http://169.254.169.254/latest/meta-data/"}, "blocked address: link-local"),
        ({"url": "http://cdn.example/lib.js"}, "third-party host"),
        ({"url": "http://app.example/private/text"}, "robots.txt"),
    ],
)
async def test_refused_requests_are_never_sent_and_counted(
    request_kw: dict[str, str], why: str
) -> None:
    web = Web({})
    url = request_kw.pop("url")
    assert await ask(web.page, url, **request_kw) == why
    assert web.client.requests == []
    assert web.page.refusals == [(url, why)]
    assert web.store.counters.get("render:refused:" + why.split(":")[0]) == 1


async def test_the_pages_host_is_asked_at_its_pace_after_the_page() -> None:
    web = Web({"http://app.example/app.js": JS, "http://app.example/api/text": JSON})
    assert await ask(web.page, "http://app.example/app.js", resource_type="script") is None
    assert await ask(web.page, "http://app.example/api/text") is None
    # The page was fetched at 1000: its requests follow at the host's delay, one at a time.
    assert web.times() == [1_000.0 + DELAY, 1_000.0 + 2 * DELAY]
    assert web.page.host_ready_at == 1_000.0 + 3 * DELAY
    assert web.page.tally.requests == 2
    assert web.store.counters.get("render:requests") == 2


async def test_another_host_allowed_takes_its_turn_from_the_frontier() -> None:
    pages = {
        "http://cdn.example/robots.txt": FakePage(b"User-agent: *\nCrawl-delay: 3\n", 200),
        "http://cdn.example/lib.js": JS,
        "http://cdn.example/other.js": JS,
    }
    web = Web(pages, other_hosts=("cdn.example",))
    frontier = web.store.frontier
    # The crawl fetches cdn.example too: one of its URLs is out at the moment.
    frontier.add([NewUrl("http://cdn.example/", 1, "cdn.example", 0, 0)], now=900.0)
    lease = frontier.take(1_000.0)
    assert lease is not None
    frontier.finish(lease, UrlStatus.FETCHED, host_ready_at=1_004.0)
    assert await ask(web.page, "http://cdn.example/lib.js", resource_type="script") is None
    # robots.txt first, at the host's time; the script after its Crawl-delay.
    assert web.client.requests == [
        (1_004.0, "http://cdn.example/robots.txt"),
        (1_007.0, "http://cdn.example/lib.js"),
    ]
    assert frontier.hold_host("cdn.example", 1_007.0, until=2_000.0) == 1_010.0
    assert await ask(web.page, "http://cdn.example/other.js", resource_type="script") is None
    assert web.times("other.js") == [1_010.0]
    assert web.store.counters.get("robots:parsed") == 1


async def test_another_hosts_busy_turn_past_the_deadline_is_a_refusal() -> None:
    web = Web({"http://cdn.example/lib.js": JS}, other_hosts=("cdn.example",), deadline=5.0)
    frontier = web.store.frontier
    assert frontier.hold_host("cdn.example", 1_000.0, until=1_100.0) is None
    frontier.release_host("cdn.example", host_ready_at=1_050.0)
    assert await ask(web.page, "http://cdn.example/lib.js") == "host busy until the deadline"
    assert web.client.requests == []


async def test_nothing_starts_after_the_deadline() -> None:
    web = Web({"http://app.example/api/text": JSON}, deadline=0.5)
    # The host's next turn (1001) is after the deadline (1000.5): never sent.
    assert await ask(web.page, "http://app.example/api/text") == "deadline"
    web.clock.advance(10)
    assert await ask(web.page, "http://app.example/api/text") == "deadline"
    assert web.client.requests == []


async def test_a_page_may_make_so_many_requests() -> None:
    web = Web({"http://app.example/api/text": JSON}, deadline=10_000.0)
    web.pace = Politeness(delay=0.0, max_crawl_delay=0.0, max_backoff=0.0)
    web.gate.pace = web.pace
    for _ in range(MAX_REQUESTS):
        assert await ask(web.page, "http://app.example/api/text") is None
    assert await ask(web.page, "http://app.example/api/text") == "too many requests"


async def test_bodies_over_the_cap_are_not_handed_to_the_browser() -> None:
    big = FakePage(b"x" * 5000, 200, (("Content-Type", "text/javascript"),))

    class Capping(FakeClient):
        async def get(self, url: str, **kw: object) -> FetchResponse:
            resp = await super().get(url, **kw)  # type: ignore[arg-type]
            return replace(resp, truncated="length") if len(resp.body) > 1024 else resp

    web = Web({})
    capping = Capping({"http://app.example/big.js": big}, clock=web.clock)
    web.gate.client = capping
    assert await ask(web.page, "http://app.example/big.js") == "over the size cap"


async def test_a_failing_host_is_slowed_down() -> None:
    class Failing(FakeClient):
        async def get(self, url: str, **kw: object) -> FetchResponse:
            await super().get(url, **kw)  # type: ignore[arg-type]
            raise FetchError("timeout-total", "not complete in 2 s", url=url)

    web = Web({})
    web.gate.client = Failing({}, clock=web.clock)
    why = await ask(web.page, "http://app.example/api/slow")
    assert why is not None and why.startswith("timeout-total")
    assert web.page.host_ready_at > 1_000.0 + 2 * DELAY  # back-off, not the plain delay


async def test_robots_unknown_for_another_origin_is_fetched_and_obeyed() -> None:
    pages = {
        "https://app.example/robots.txt": FakePage(b"User-agent: *\nDisallow: /\n", 200),
        "https://app.example/x.js": JS,
    }
    web = Web(pages)
    assert await ask(web.page, "https://app.example/x.js") == "robots.txt"
    assert web.times() == [1_000.0 + DELAY]  # the robots.txt, in the host's turn


async def test_a_name_resolving_to_a_private_address_is_refused_before_any_connection() -> None:
    class Rebinding:
        async def lookup(self, host: str) -> DnsAnswer:
            return DnsAnswer(("93.184.216.34", "10.0.0.5"), 60.0)

        async def close(self) -> None:
            pass

    clock = FakeClock(1_000.0)
    dns = DnsCache(guard=AddressGuard(), clock=clock, backend=Rebinding())
    client = HttpClient(
        dns=dns,
        user_agent="trawl-test",
        timeouts=Timeouts(connect=1, first_byte=1, total=1),
        max_body_bytes=1024,
        clock=clock,
    )
    web = Web({}, other_hosts=("rebind.example",), client=client)
    web.robots.record("http://rebind.example", status=404, body=b"", now=0.0)
    try:
        why = await ask(web.page, "http://rebind.example/data.json")
    finally:
        await client.close()
    assert why is not None and why.startswith("blocked address:") and "10.0.0.5" in why


async def test_closing_the_gate_cancels_what_is_under_way_and_frees_the_host() -> None:
    started, release = asyncio.Event(), asyncio.Event()

    class Slow(FakeClient):
        async def get(self, url: str, **kw: object) -> FetchResponse:
            started.set()
            await release.wait()  # the server never answers before the render ends
            return await super().get(url, **kw)  # type: ignore[arg-type]

    web = Web({}, other_hosts=("cdn.example",))
    web.gate.client = Slow({"http://cdn.example/lib.js": JS}, clock=web.clock)
    web.robots.record("http://cdn.example", status=404, body=b"", now=0.0)
    pending = asyncio.create_task(web.page.answer(BrowserRequest("http://cdn.example/lib.js")))
    await started.wait()
    assert web.store.frontier.hold_host("cdn.example", 1_000.0, until=2_000.0) is not None
    web.page.close()
    answer = await pending
    assert answer.response is None and answer.refused == "render ended"
    # The host held for it was given back, at its pace.
    assert web.store.frontier.hold_host("cdn.example", 1_000.0 + DELAY, until=2_000.0) is None
    later = await web.page.answer(BrowserRequest("http://app.example/app.js"))
    assert later.refused == "render ended"
    assert web.client.requests == []
