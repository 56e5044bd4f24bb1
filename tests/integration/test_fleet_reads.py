"""The read commands over a fleet's crawl: `trawl export`, `index`, `search` and `serve`
with `--redis URL` (the crawl in a real redis-server, its logs in SeaweedFS's S3).

One crawl is run by `trawl crawl --redis --blobs s3://...` (its local worker); then
every read command must see exactly what the fleet committed: the export holds each
stored page once, the index built from Redis finds them with snippets read from S3,
and the server answers search, page copies and hosts from the same place.
"""

from __future__ import annotations

import asyncio
import gzip
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import orjson
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest

from tests.api.serveproc import trawl_serve
from tests.redis_servers import RedisServer
from trawl.storage.place import CrawlPlace
from trawl.testing.sampleweb import SampleWeb, SampleWebServer

TRAWL = str(Path(sys.executable).with_name("trawl"))


def _trawl(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([TRAWL, *args], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture
def fleet_crawl(tmp_path: Path, redis_server: RedisServer, s3_url: str) -> tuple[str, str]:
    """(redis URL, crawl id) of a finished fleet crawl of a small web."""
    web = SampleWeb(hosts=3, pages_per_host=15, seed=9)
    hosts = [h for i, h in enumerate(web.hosts) if i != 1][:2]  # host 1 has a long delay

    async def crawl() -> None:
        async with SampleWebServer(web) as srv:
            args = ["--quiet", "--delay", "0", "--allow-network", "127.0.0.0/8"]
            args += ["--scope", "allowlist", "--parse-workers", "0"]
            for host in hosts:
                args += ["--allow-host", host, "--resolve", f"{host}=127.0.0.1"]
            proc = await asyncio.create_subprocess_exec(
                TRAWL,
                "crawl",
                "--redis",
                redis_server.url,
                "--blobs",
                s3_url,
                "--crawl-id",
                "reads",
                "--data",
                str(tmp_path / "local"),
                *args,
                *[web.url(h, "/", port=srv.port) for h in hosts],
            )
            assert await asyncio.wait_for(proc.wait(), 120) == 0

    asyncio.run(crawl())
    return redis_server.url, "reads"


def _get(base: str, path: str, method: str = "GET", **params: str) -> tuple[int, Any]:
    """(status, JSON body) of one request to a running server."""
    url = base.rstrip("/") + path + ("?" + urllib.parse.urlencode(params) if params else "")
    data = b"{}" if method == "POST" else None
    request = urllib.request.Request(url, data=data, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, orjson.loads(answer.read())
    except urllib.error.HTTPError as refused:
        body = refused.read()
        return refused.code, orjson.loads(body) if body.startswith(b"{") else body


def _stored(redis_url: str, crawl: str) -> dict[str, str]:
    """content hash -> URL of every page the fleet committed."""
    reader = CrawlPlace(redis=redis_url, crawl=crawl).reader()
    try:
        return {p.content_hash: p.url for p in reader.pages()}
    finally:
        reader.close()


def test_export_index_search_and_serve_read_a_fleet_crawl(
    tmp_path: Path, fleet_crawl: tuple[str, str]
) -> None:
    redis_url, crawl = fleet_crawl
    where = ["--redis", redis_url, "--crawl-id", crawl]
    stored = _stored(redis_url, crawl)
    assert len(stored) > 10

    # export: every stored page once, nothing else
    out = tmp_path / "export"
    _trawl("export", *where, "--format", "jsonl", "--out", str(out))
    rows = [
        orjson.loads(line)
        for part in sorted(out.glob("part-*.jsonl.gz"))
        for line in gzip.decompress(part.read_bytes()).splitlines()
    ]
    assert sorted(r["content_hash"] for r in rows) == sorted(stored)
    manifest = orjson.loads((out / "_manifest.json").read_bytes())
    assert manifest["documents"] == len(stored)
    assert "@" not in manifest["committed"] and "=" in manifest["committed"]  # per writer

    # export --links: every worker's link log, read from S3; each kept page's links once
    graph = tmp_path / "links"
    _trawl("export", *where, "--links", "--out", str(graph))
    links = pq.read_table(graph / "part-00000.parquet").to_pylist()
    fetches = {(r["source_url"], r["fetched_at"]) for r in links}
    assert {r["final_url"] for r in rows} <= {source for source, _at in fetches}
    assert len(fetches) == len({source for source, _at in fetches})
    assert orjson.loads((graph / "_manifest.json").read_bytes())["links"] == len(links)

    # index: built from Redis + S3 into a local directory
    local = tmp_path / "searchnode"
    done = _trawl("index", *where, "--data", str(local), "--quiet")
    assert f"indexed {len(stored):,} documents" in done.stdout, done.stdout

    # search: a word of one stored page finds it, with a snippet read from S3
    row = max(rows, key=lambda r: len(r["text"] or ""))
    word = max((w for w in row["text"].split() if w.isalpha()), key=len)
    found = orjson.loads(_trawl("search", word, *where, "--data", str(local), "--json").stdout)
    assert found["total"] >= 1
    assert row["url"] in {h["link"] for h in found["results"]}
    assert all(h["snippet"] for h in found["results"])

    # serve: search, a page's stored copy and a host, over the same fleet crawl
    with trawl_serve(local, *where) as (base, _proc):
        status, answer = _get(base, "/api/v1/search", query=word)
        assert status == 200, answer
        assert row["url"] in {h["link"] for h in answer["results"]}
        status, page = _get(base, "/v1/pages", url=row["url"], body="false")
        assert status == 200, page
        assert page["content_hash"] == row["content_hash"]
        assert page["crawl"] == crawl
        assert _get(base, "/v1/pages", url=row["url"], crawl="other")[0] == 404
        status, seen = _get(base, f"/v1/hosts/{urllib.parse.urlsplit(row['url']).netloc}")
        assert status == 200, seen
        assert seen["pages_fetched"] > 0
        assert _get(base, "/v1/hosts/never.example")[0] == 404
        assert _get(base, "/v1/crawls", method="POST")[0] in (404, 405)  # no control
        _check_events(base, {r["url"] for r in rows})
        status, doc = _get(base, "/api/v1/openapi.json")
        assert status == 200
        assert {"/v1/pages", "/v1/hosts/{host}", "/v1/events", "/api/v1/search"} <= set(
            doc["paths"]
        )
        assert "/v1/crawls" not in doc["paths"]
        after = [p for p in doc["paths"]["/v1/events"]["get"]["parameters"] if p["name"] == "after"]
        assert after[0]["schema"]["type"] == "string"  # the fleet cursor


def _check_events(base: str, stored_urls: set[str]) -> None:
    """Every worker's committed events, paged by the fleet cursor, each once; the SSE
    stream goes on from a cursor."""
    status, whole = _get(base, "/v1/events", limit="1000")
    assert status == 200, whole
    everything = whole["events"]
    assert everything and all(e["writer"] for e in everything)
    paged, cursor = [], "0"
    while True:
        status, page = _get(base, "/v1/events", after=cursor, limit="7")
        assert status == 200, page
        if not page["events"]:
            break
        paged += page["events"]
        cursor = page["last_id"]
    assert [(e["writer"], e["id"]) for e in paged] == [(e["writer"], e["id"]) for e in everything]
    assert len({(e["writer"], e["id"]) for e in paged}) == len(paged)  # each once
    assert stored_urls <= {e.get("url") for e in everything}
    assert _get(base, "/v1/events", after="not a cursor")[0] == 400

    # SSE from the cursor of the tenth event: the next frame is the eleventh.
    request = urllib.request.Request(
        base.rstrip("/") + "/v1/events",
        headers={"Accept": "text/event-stream", "Last-Event-ID": everything[9]["cursor"]},
    )
    with urllib.request.urlopen(request, timeout=30) as stream:
        for raw in stream:
            line = raw.decode().strip()
            if line.startswith("data: "):
                first = orjson.loads(line[6:])
                break
    assert (first["writer"], first["id"]) == (everything[10]["writer"], everything[10]["id"])
