"""``GET /metrics``: every crawl's numbers in the Prometheus text format.

A custom collector reads each crawl's ``progress.json`` at scrape time (the crawler
rewrites it about once a second), so a scrape costs a few small file reads and the
crawler keeps no Prometheus state of its own. Each sample carries the crawl id.
The registry belongs to the app, not to the process (no global default registry).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from trawl.telemetry import PROGRESS_FILE, read_json

# (metric name, help, counter prefix, label name): counters kept by the crawler.
_COUNTER_GROUPS = (
    ("trawl_fetch_responses", "HTTP responses by status code", "status:", "status"),
    ("trawl_fetch_errors", "fetches that failed, by error kind", "error:", "kind"),
    ("trawl_robots_outcomes", "robots.txt fetches by outcome", "robots:", "outcome"),
    ("trawl_urls_skipped", "URLs not fetched, by reason", "skipped:", "reason"),
    ("trawl_links_dropped", "discovered links not admitted, by reason", "dropped:", "reason"),
    ("trawl_parse_outcomes", "parsed pages by outcome", "parse:", "outcome"),
)
_URL_STATES = ("queued", "in_flight", "waiting", "fetched", "parsed", "failed", "skipped")
_STATES = ("running", "paused", "stopping", "finished", "failed")


def _histogram(name: str, doc: str, crawl: str, data: dict[str, Any]) -> HistogramMetricFamily:
    h = HistogramMetricFamily(name, doc, labels=["crawl"])
    total, buckets = 0, []
    for bound, n in zip([*data["buckets"], float("inf")], data["counts"], strict=True):
        total += int(n)
        buckets.append(("+Inf" if bound == float("inf") else repr(float(bound)), total))
    h.add_metric([crawl], buckets, sum_value=float(data["sum"]))
    return h


class CrawlCollector(Collector):
    """Reads ``<crawl>/progress.json`` of every crawl ``crawls()`` lists."""

    def __init__(self, crawls: Callable[[], Iterable[tuple[str, Path, str]]]) -> None:
        self._crawls = crawls  # (id, directory, state)

    def collect(self) -> Iterator[Metric]:
        docs = []
        state = GaugeMetricFamily(
            "trawl_crawl_state", "1 for the crawl's state", labels=["crawl", "state"]
        )
        for crawl_id, directory, status in self._crawls():
            for s in _STATES:
                state.add_metric([crawl_id, s], 1.0 if s == status else 0.0)
            doc = read_json(directory / PROGRESS_FILE)
            if doc is not None and isinstance(doc.get("snapshot"), dict):
                docs.append((crawl_id, doc))
        yield state
        yield from self._counters(docs)
        yield from self._gauges(docs)
        for crawl_id, doc in docs:
            for key, name, what in (
                ("fetch_latency", "trawl_fetch_latency_seconds", "fetch (robots, HTTP, WARC)"),
                ("parse_latency", "trawl_parse_latency_seconds", "page parse"),
            ):
                if isinstance(doc.get(key), dict):
                    yield _histogram(name, f"seconds per {what}", crawl_id, doc[key])

    def _counters(self, docs: list[tuple[str, dict[str, Any]]]) -> Iterator[Metric]:
        for name, doc, prefix, label in _COUNTER_GROUPS:
            family = CounterMetricFamily(name, doc, labels=["crawl", label])
            for crawl_id, d in docs:
                for key, n in sorted(d.get("counters", {}).items()):
                    if key.startswith(prefix):
                        family.add_metric([crawl_id, key[len(prefix) :]], float(n))
            yield family
        received = CounterMetricFamily("trawl_received_bytes", "bytes received", labels=["crawl"])
        dedup = CounterMetricFamily(
            "trawl_duplicates", "pages found to repeat a kept page", labels=["crawl", "kind"]
        )
        for crawl_id, d in docs:
            received.add_metric([crawl_id], float(d["snapshot"].get("bytes", 0)))
            counters = d.get("counters", {})
            dedup.add_metric([crawl_id, "exact"], float(counters.get("parse:duplicate", 0)))
            dedup.add_metric([crawl_id, "near"], float(counters.get("parse:near", 0)))
        yield received
        yield dedup

    def _gauges(self, docs: list[tuple[str, dict[str, Any]]]) -> Iterator[Metric]:
        urls = GaugeMetricFamily(
            "trawl_urls", "URLs the crawl knows, by state", labels=["crawl", "state"]
        )
        hosts = GaugeMetricFamily(
            "trawl_hosts", "hosts with queued URLs", labels=["crawl", "state"]
        )
        backlog = GaugeMetricFamily(
            "trawl_parse_backlog", "pages waiting for a parse", labels=["crawl"]
        )
        rate = GaugeMetricFamily(
            "trawl_pages_per_second", "pages stored per second", labels=["crawl"]
        )
        for crawl_id, d in docs:
            snap = d["snapshot"]
            for s in _URL_STATES:
                urls.add_metric([crawl_id, s], float(snap.get(s, 0)))
            hosts.add_metric([crawl_id, "ready"], float(snap.get("hosts_ready", 0)))
            hosts.add_metric([crawl_id, "waiting"], float(snap.get("hosts_waiting", 0)))
            backlog.add_metric([crawl_id], float(snap.get("parse_backlog", 0)))
            rate.add_metric([crawl_id], float(snap.get("pages_per_second", 0.0)))
        yield from (urls, hosts, backlog, rate)
