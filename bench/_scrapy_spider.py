"""The Scrapy side of bench/bench_crawl.py: a broad-crawl spider, run in bench/.env.

Not imported by anything: bench_crawl.py runs it as a script with the bench's own
Python (``bench/.env/bin/python bench/_scrapy_spider.py ...``), where Scrapy is
installed. Scrapy and Twisted are loaded with importlib, so mypy (which checks bench/
with the main venv, where Scrapy is not installed) sees them as ``Any``.

The settings follow Scrapy's "Broad Crawls" page (DownloaderAwarePriorityQueue, high
CONCURRENT_REQUESTS, a bigger reactor thread pool, INFO logging, no cookies, no
retries, a 15 s download timeout, AJAX crawl detection, breadth-first order), with
one request per host at a time (CONCURRENT_REQUESTS_PER_DOMAIN = 1; Twisted's epoll
reactor, see TWISTED_REACTOR below), no download delay, robots.txt obeyed. Redirects
stay on, as trawl follows them (the sample web has none). Host names are mapped to
127.0.0.1 by ``MapResolver`` (names not in the map fail), so both crawlers see the same
many distinct hosts and nothing leaves loopback.

Every page's text (``//body//text()`` joined) goes to a JSON-lines feed with its URL;
every response's status and URL (robots.txt included) to ``--responses``; Scrapy's
stats to ``--stats`` at the end.
"""

from __future__ import annotations

import argparse
import importlib
import json
from pathlib import Path
from typing import Any

_defer: Any = importlib.import_module("twisted.internet.defer")
_terror: Any = importlib.import_module("twisted.internet.error")
_resolver: Any = importlib.import_module("scrapy.resolver")
_scrapy: Any = importlib.import_module("scrapy")
_signals: Any = importlib.import_module("scrapy.signals")
_linkextractors: Any = importlib.import_module("scrapy.linkextractors")
_crawler: Any = importlib.import_module("scrapy.crawler")

LOOPBACK = "127.0.0.1"


class MapResolver(_resolver.CachingThreadedResolver):  # type: ignore[misc]
    """Scrapy's default resolver, answering 127.0.0.1 for the sample hosts only."""

    hosts: frozenset[str] = frozenset()

    def getHostByName(self, name: str, timeout: Any = ()) -> Any:  # noqa: N802 (Twisted's name)
        if name.lower().rstrip(".") in self.hosts:
            return _defer.succeed(LOOPBACK)
        return _defer.fail(_terror.DNSLookupError(f"{name} is not a sample host"))


class BroadSpider(_scrapy.Spider):  # type: ignore[misc]
    name = "broad"

    def __init__(self, seeds: list[str], hosts: list[str], port: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = seeds
        self.allowed_domains = hosts  # OffsiteMiddleware: host names, no port
        # LinkExtractor's allow_domains compares the netloc, port included.
        netlocs = hosts if port == 80 else [f"{h}:{port}" for h in hosts]
        self.links = _linkextractors.LinkExtractor(allow_domains=netlocs)

    def parse(self, response: Any) -> Any:
        yield {"url": response.url, "text": " ".join(response.xpath("//body//text()").getall())}
        for link in self.links.extract_links(response):
            yield response.follow(link, callback=self.parse)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--seeds", type=Path, required=True)
    p.add_argument("--hosts", type=Path, required=True, help="the scope: one host a line")
    p.add_argument("--feed", type=Path, required=True)
    p.add_argument("--responses", type=Path, required=True)
    p.add_argument("--stats", type=Path, required=True)
    p.add_argument("--port", type=int, default=80, help="the port the web is served on")
    p.add_argument("--concurrency", type=int, default=300)
    p.add_argument("--threads", type=int, default=20)
    p.add_argument("--timeout", type=float, default=0, help="CLOSESPIDER_TIMEOUT (0: none)")
    p.add_argument("--max-pages", type=int, default=0, help="CLOSESPIDER_PAGECOUNT (0: none)")
    p.add_argument("--agent", default="benchbot")
    p.add_argument("--reactor", default="twisted.internet.epollreactor.EPollReactor")
    args = p.parse_args()
    seeds = args.seeds.read_text().split()
    hosts = args.hosts.read_text().split()
    MapResolver.hosts = frozenset(h.lower() for h in hosts)
    settings = {
        "BOT_NAME": args.agent,
        "USER_AGENT": f"Mozilla/5.0 (compatible; {args.agent}/1.0; +https://trawl.invalid/bench)",
        "ROBOTSTXT_OBEY": True,
        "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.DownloaderAwarePriorityQueue",
        "CONCURRENT_REQUESTS": args.concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "DOWNLOAD_DELAY": 0,
        "REACTOR_THREADPOOL_MAXSIZE": args.threads,
        "LOG_LEVEL": "INFO",
        "COOKIES_ENABLED": False,
        "RETRY_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 15,
        "REDIRECT_ENABLED": True,
        "AJAXCRAWL_ENABLED": True,
        "DEPTH_PRIORITY": 1,
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
        "TWISTED_DNS_RESOLVER": "__main__.MapResolver",
        # Since Scrapy 2.14 the downloader starts each queued request as an asyncio task
        # and counts it as transferring only once the task runs, so under the (default)
        # asyncio reactor CONCURRENT_REQUESTS_PER_DOMAIN = 1 lets every queued request of
        # a host go at once (seen in bench_crawl's politeness check). Twisted's epoll
        # reactor runs the coroutine at once, and the limit holds.
        "TWISTED_REACTOR": args.reactor,
        "TELNETCONSOLE_ENABLED": False,
        "CLOSESPIDER_TIMEOUT": args.timeout,
        "CLOSESPIDER_PAGECOUNT": args.max_pages,
        "FEEDS": {str(args.feed): {"format": "jsonlines", "encoding": "utf8"}},
    }
    process = _crawler.CrawlerProcess(settings)
    crawler = process.create_crawler(BroadSpider)
    out = args.responses.open("w", encoding="utf-8")

    def on_response(response: Any, request: Any, spider: Any) -> None:
        out.write(f"{response.status}\t{response.url}\n")

    def on_closed(spider: Any, reason: str) -> None:
        out.close()
        stats = {
            k: v if isinstance(v, int | float) else str(v)
            for k, v in crawler.stats.get_stats().items()
        }
        stats["finish_reason"] = reason
        args.stats.write_text(json.dumps(stats, indent=1, sort_keys=True))

    crawler.signals.connect(on_response, signal=_signals.response_received)
    crawler.signals.connect(on_closed, signal=_signals.spider_closed)
    process.crawl(crawler, seeds=seeds, hosts=hosts, port=args.port)
    process.start()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
