"""Throughput and client CPU cost of HttpClient.get against a local aiohttp server.

Run with ``.venv/bin/python bench/bench_http.py [--count N] [--concurrency C]
[--hosts H] [--size BYTES] [--gzip]``. Starts an aiohttp.web server in a subprocess on
127.0.0.1 (so its CPU is not counted) serving a page of ``--size`` bytes (50 KB by
default, HTML text; ``--gzip`` serves it gzip-coded, which the client decodes). The
client maps ``--hosts`` names (``h0.bench.test`` ...) to 127.0.0.1 through DNS
overrides, with the guard opened for 127.0.0.0/8, and runs ``--concurrency`` tasks that
fetch ``--count`` pages in all, each task keeping to its own host as the crawler does
(one request in flight per host). A warm-up pass opens the connections first. Then the
same loop with plain aiohttp (same pool settings, a resolver that maps every name to
127.0.0.1, no guard, no caps, ``resp.read()``) as a baseline for the client's own cost.
Prints
requests per second (wall), client CPU milliseconds per request
(``time.process_time`` of this process only, split into user and system time: the
system part is the kernel's socket work), and how many TCP connections the server
accepted (equal to the number of hosts when keep-alive works). Figures are printed,
never asserted. No traffic leaves the loopback interface.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from ipaddress import ip_network

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from trawl.clock import SystemClock
from trawl.config import Timeouts
from trawl.fetch.address import AddressGuard
from trawl.fetch.dns import DnsAnswer, DnsCache, DnsError
from trawl.fetch.http import HttpClient


def _page(size: int) -> bytes:
    para = b"<p>The quick brown fox jumps over the lazy dog, again and again.</p>\n"
    head = b"<!doctype html><html><head><title>Bench</title></head><body>\n"
    body = head + para * (size // len(para) + 1)
    return body[: size - len(b"</body></html>")] + b"</body></html>"


# -- the server (a subprocess) ---------------------------------------------------------------


async def _serve(size: int, coded: bool) -> None:
    from aiohttp import web

    body = _page(size)
    headers = {"Content-Type": "text/html; charset=utf-8"}
    if coded:
        body = gzip.compress(body, 6)
        headers["Content-Encoding"] = "gzip"
    peers: set[object] = set()  # client (ip, port): one per TCP connection

    async def page(request: web.Request) -> web.Response:
        transport = request.transport
        if transport is not None:
            peers.add(transport.get_extra_info("peername"))
        return web.Response(body=body, headers=headers)

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
    await site.start()
    print(f"PORT {runner.addresses[0][1]}", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    print(f"CONNECTIONS {len(peers)}", flush=True)
    await runner.cleanup()


# -- the client --------------------------------------------------------------------------------


class _NoDns:
    async def lookup(self, host: str) -> DnsAnswer:
        raise DnsError("nxdomain", host, "bench names are overrides only")

    async def close(self) -> None:
        return None


class _LoopbackResolver(AbstractResolver):
    """The baseline's resolver: every name is 127.0.0.1, no checks."""

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        flags = socket.AI_NUMERICHOST | socket.AI_NUMERICSERV
        return [
            {
                "hostname": host,
                "host": "127.0.0.1",
                "port": port,
                "family": socket.AF_INET,
                "proto": 0,
                "flags": flags,
            }
        ]

    async def close(self) -> None:
        return None


async def _timed(
    fetch: Callable[[str], Awaitable[int]], urls: list[list[str]]
) -> tuple[float, float, float, int, list[str]]:
    """Runs one task per URL list; returns wall, CPU, user CPU, bytes, failures."""
    failures: list[str] = []

    async def worker(todo: list[str]) -> int:
        received = 0
        for url in todo:
            try:
                received += await fetch(url)
            except Exception as exc:
                failures.append(repr(exc))
        return received

    wall, cpu, user = time.perf_counter(), time.process_time(), os.times().user
    got = await asyncio.gather(*(worker(todo) for todo in urls))
    cpu, user = time.process_time() - cpu, os.times().user - user
    return time.perf_counter() - wall, cpu, user, sum(got), failures


def _report(label: str, count: int, result: tuple[float, float, float, int, list[str]]) -> None:
    wall, cpu, user, received, failures = result
    print(
        f"{label:<10} {count / wall:7,.0f} requests/s   CPU {cpu / count * 1000:.3f} ms/request"
        f" (user {user / count * 1000:.3f}, system {(cpu - user) / count * 1000:.3f})"
        f"   {received / max(count - len(failures), 1):,.0f} bytes/page"
        f"   {len(failures)} failed" + (f": {failures[0]}" if failures else "")
    )


async def _run(port: int, count: int, concurrency: int, hosts: int, size: int) -> None:
    names = [f"h{i}.bench.test" for i in range(hosts)]
    clock = SystemClock()
    dns = DnsCache(
        guard=AddressGuard([ip_network("127.0.0.0/8")]),
        clock=clock,
        overrides={name: "127.0.0.1" for name in names},
        backend=_NoDns(),
    )
    client = HttpClient(
        dns=dns,
        user_agent="trawl-bench/0 (+https://trawl.invalid/bot)",
        timeouts=Timeouts(connect=5, first_byte=10, total=30),
        max_body_bytes=10 * 1024 * 1024,
        clock=clock,
    )

    def html_only(mime: str | None) -> bool:
        return mime == "text/html"

    async def trawl_fetch(url: str) -> int:
        return len((await client.get(url, accept=html_only)).body)

    def plan(total: int) -> list[list[str]]:
        per_task = [total // concurrency + (i < total % concurrency) for i in range(concurrency)]
        return [
            [f"http://{names[i % hosts]}:{port}/page/{i}/{n}" for n in range(per_task[i])]
            for i in range(concurrency)
        ]

    print(f"{count} requests, {concurrency} tasks, {hosts} hosts, {size:,}-byte page")
    try:
        await _timed(trawl_fetch, plan(concurrency))  # warm-up: one connection per host
        _report("HttpClient", count, await _timed(trawl_fetch, plan(count)))
    finally:
        await client.close()
        await dns.close()

    # Baseline: plain aiohttp, same pool settings, no guard, no caps, no header copies.
    connector = aiohttp.TCPConnector(
        resolver=_LoopbackResolver(), use_dns_cache=False, limit=1024, limit_per_host=0
    )
    async with aiohttp.ClientSession(connector=connector) as session:

        async def plain_fetch(url: str) -> int:
            async with session.get(url, allow_redirects=False) as resp:
                return len(await resp.read())

        await _timed(plain_fetch, plan(concurrency))
        _report("aiohttp", count, await _timed(plain_fetch, plan(count)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--hosts", type=int, default=50)
    parser.add_argument("--size", type=int, default=50 * 1024)
    parser.add_argument("--gzip", action="store_true", help="serve the page gzip-coded")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        asyncio.run(_serve(args.size, args.gzip))
        return
    command = [sys.executable, __file__, "--serve", "--size", str(args.size)]
    if args.gzip:
        command.append("--gzip")
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert server.stdin is not None and server.stdout is not None
    try:
        port = int(server.stdout.readline().split()[1])
        asyncio.run(_run(port, args.count, args.concurrency, args.hosts, args.size))
        server.stdin.close()
        print(f"server     {server.stdout.readline().strip().lower()} accepted in all")
    finally:
        if server.poll() is None:
            server.stdin.close()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
