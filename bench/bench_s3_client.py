"""Which S3 client for the blob store: CPU and wall time of each against one SeaweedFS.

    .venv/bin/python bench/bench_s3_client.py [--segments 4] [--gets 1000] [--keys 500]

Starts SeaweedFS (``trawl.testing.s3server``) on loopback, then for each client that
imports: PUT of 64 MiB segments (one PUT each; boto3 also as 8 MiB multipart), 1,000
ranged GETs of 2-50 KiB records at random offsets of a segment, LIST of a prefix of
``--keys`` small objects, and the same ranged GETs from 4 threads at once (the blob
store is called from reader threads). CPU is this process's user+system time (all its
threads, the Rust runtime's included), so the figures are CPU per 1,000 GETs and per
GiB uploaded on the client side. Also: a PUT per commit of a small part versus
re-uploading a growing segment, the two ways ``sync()`` could publish a segment; and
the chosen store (``S3BlobStore``) driven as a crawl drives it: PUTs and bytes per
commit, CPU per 1,000 ``read()`` calls.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import resource
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trawl.models import Location
from trawl.storage.blobs import EVENT_LOG, TEXT_LOG, WARC_LOG
from trawl.storage.s3 import S3BlobStore, S3Objects
from trawl.testing.s3server import SeaweedS3

MIB = 1 << 20
SEGMENT = 64 * MIB


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


@dataclass
class Measure:
    cpu: float = 0.0
    wall: float = 0.0


@contextlib.contextmanager
def measured() -> Iterator[Measure]:
    m = Measure()
    c0, w0 = _cpu(), time.perf_counter()
    yield m
    m.cpu, m.wall = _cpu() - c0, time.perf_counter() - w0


class Client:
    """One candidate: the four operations the blob store needs, synchronous."""

    name = "?"

    def put(self, key: str, data: bytes) -> None:
        raise NotImplementedError

    def get_range(self, key: str, start: int, end: int) -> bytes:
        raise NotImplementedError

    def list(self, prefix: str) -> list[str]:
        raise NotImplementedError

    def close(self) -> None:
        return None


class Boto3(Client):
    def __init__(self, server: SeaweedS3, bucket: str, *, checksums: bool) -> None:
        import boto3
        from botocore.config import Config

        when = "when_supported" if checksums else "when_required"
        self.name = "boto3" + ("" if checksums else " (checksums when_required)")
        self.bucket = bucket
        self.s3 = boto3.session.Session().client(
            "s3",
            endpoint_url=server.endpoint,
            aws_access_key_id=server.access_key,
            aws_secret_access_key=server.secret_key,
            region_name=server.region,
            config=Config(
                max_pool_connections=16,
                request_checksum_calculation=when,
                response_checksum_validation=when,
            ),
        )

    def put(self, key: str, data: bytes) -> None:
        self.s3.put_object(Bucket=self.bucket, Key=key, Body=data)

    def get_range(self, key: str, start: int, end: int) -> bytes:
        r = self.s3.get_object(Bucket=self.bucket, Key=key, Range=f"bytes={start}-{end - 1}")
        return bytes(r["Body"].read())

    def list(self, prefix: str) -> list[str]:
        keys: list[str] = []
        for page in self.s3.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=prefix
        ):
            keys.extend(o["Key"] for o in page.get("Contents", []))
        return keys


class Boto3Multipart(Boto3):
    def __init__(self, server: SeaweedS3, bucket: str) -> None:
        super().__init__(server, bucket, checksums=False)
        self.name = "boto3 multipart 8 MiB (when_required)"

    def put(self, key: str, data: bytes) -> None:
        up = self.s3.create_multipart_upload(Bucket=self.bucket, Key=key)
        parts = []
        for n, i in enumerate(range(0, len(data), 8 * MIB), start=1):
            r = self.s3.upload_part(
                Bucket=self.bucket,
                Key=key,
                UploadId=up["UploadId"],
                PartNumber=n,
                Body=data[i : i + 8 * MIB],
            )
            parts.append({"PartNumber": n, "ETag": r["ETag"]})
        self.s3.complete_multipart_upload(
            Bucket=self.bucket,
            Key=key,
            UploadId=up["UploadId"],
            MultipartUpload={"Parts": parts},
        )


class Obstore(Client):
    name = "obstore"

    def __init__(self, server: SeaweedS3, bucket: str) -> None:
        import obstore
        from obstore.store import S3Store

        self.ob = obstore
        self.store = S3Store(
            bucket,
            endpoint=server.endpoint,
            access_key_id=server.access_key,
            secret_access_key=server.secret_key,
            region=server.region,
            client_options={"allow_http": True},
        )

    def put(self, key: str, data: bytes) -> None:
        self.ob.put(self.store, key, data)

    def get_range(self, key: str, start: int, end: int) -> bytes:
        return bytes(self.ob.get_range(self.store, key, start=start, end=end))

    def list(self, prefix: str) -> list[str]:
        return [o["path"] for batch in self.ob.list(self.store, prefix) for o in batch]


class AioBotocore(Client):
    """aiobotocore on an event loop in a thread of its own, as a sync wrapper would be:
    callers (any thread) hand it coroutines and wait for the result."""

    name = "aiobotocore (sync wrapper)"

    def __init__(self, server: SeaweedS3, bucket: str) -> None:
        from aiobotocore.session import get_session
        from botocore.config import Config

        self.bucket = bucket
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        cm = get_session().create_client(
            "s3",
            endpoint_url=server.endpoint,
            aws_access_key_id=server.access_key,
            aws_secret_access_key=server.secret_key,
            region_name=server.region,
            config=Config(
                request_checksum_calculation="when_required",
                response_checksum_validation="when_required",
            ),
        )
        self._cm = cm
        self.s3 = self._run(cm.__aenter__())

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def put(self, key: str, data: bytes) -> None:
        self._run(self.s3.put_object(Bucket=self.bucket, Key=key, Body=data))

    def get_range(self, key: str, start: int, end: int) -> bytes:
        async def go() -> bytes:
            r = await self.s3.get_object(
                Bucket=self.bucket, Key=key, Range=f"bytes={start}-{end - 1}"
            )
            async with r["Body"] as body:
                return bytes(await body.read())

        return bytes(self._run(go()))

    def list(self, prefix: str) -> list[str]:
        async def go() -> list[str]:
            keys: list[str] = []
            async for page in self.s3.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=prefix
            ):
                keys.extend(o["Key"] for o in page.get("Contents", []))
            return keys

        return list(self._run(go()))

    def close(self) -> None:
        self._run(self._cm.__aexit__(None, None, None))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


class S3fs(Client):
    name = "s3fs"

    def __init__(self, server: SeaweedS3, bucket: str) -> None:
        import s3fs

        self.bucket = bucket
        self.fs = s3fs.S3FileSystem(
            key=server.access_key,
            secret=server.secret_key,
            endpoint_url=server.endpoint,
            client_kwargs={"region_name": server.region},
            skip_instance_cache=True,
        )

    def put(self, key: str, data: bytes) -> None:
        self.fs.pipe_file(f"{self.bucket}/{key}", data)

    def get_range(self, key: str, start: int, end: int) -> bytes:
        return bytes(self.fs.cat_file(f"{self.bucket}/{key}", start=start, end=end))

    def list(self, prefix: str) -> list[str]:
        self.fs.invalidate_cache()
        return [str(p) for p in self.fs.find(f"{self.bucket}/{prefix}")]


def _candidates(server: SeaweedS3, bucket: str) -> list[tuple[str, Callable[[], Client]]]:
    return [
        ("boto3", lambda: Boto3(server, bucket, checksums=True)),
        ("boto3-nochecksum", lambda: Boto3(server, bucket, checksums=False)),
        ("boto3-multipart", lambda: Boto3Multipart(server, bucket)),
        ("obstore", lambda: Obstore(server, bucket)),
        ("aiobotocore", lambda: AioBotocore(server, bucket)),
        ("s3fs", lambda: S3fs(server, bucket)),
    ]


def _ranges(n: int, seed: int) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        size = rng.randint(2 * 1024, 50 * 1024)
        start = rng.randrange(0, SEGMENT - size)
        out.append((start, start + size))
    return out


def bench_client(
    client: Client, tag: str, payload: bytes, segments: int, gets: int, list_prefix: str
) -> dict[str, float]:
    keys = [f"seg/{tag}/trawl-{i:05d}.warc.gz" for i in range(1, segments + 1)]
    with measured() as put:
        for key in keys:
            client.put(key, payload)
    ranges = _ranges(gets, seed=7)
    with measured() as get:
        for start, end in ranges:
            data = client.get_range(keys[0], start, end)
            assert data == payload[start:end]
    with measured() as threaded:

        def one(r: tuple[int, int]) -> bool:
            return client.get_range(keys[-1], r[0], r[1]) == payload[r[0] : r[1]]

        with ThreadPoolExecutor(4) as pool:
            assert all(pool.map(one, ranges))
    with measured() as lst:
        for _ in range(10):
            assert len(client.list(list_prefix)) >= 1
    gib = segments * len(payload) / (1 << 30)
    return {
        "put_cpu_per_gib": put.cpu / gib,
        "put_mib_s": segments * len(payload) / MIB / put.wall,
        "get_cpu_per_1000": get.cpu * 1000 / gets,
        "get_wall_per_1000": get.wall * 1000 / gets,
        "get4_cpu_per_1000": threaded.cpu * 1000 / gets,
        "get4_wall_per_1000": threaded.wall * 1000 / gets,
        "list_cpu_ms": lst.cpu * 100,
        "list_wall_ms": lst.wall * 100,
    }


def bench_sync_designs(client: Client, commits: int, record: int) -> None:
    """sync() as a new part per commit versus the growing segment uploaded again."""
    chunk = os.urandom(record)
    with measured() as parts:
        for i in range(commits):
            client.put(f"sync/parts/trawl-00001.warc.gz/{i * record:016d}", chunk)
    grown = bytearray()
    with measured() as whole:
        for _ in range(commits):
            grown += chunk
            client.put("sync/whole/trawl-00001.warc.gz", bytes(grown))
    total = commits * record
    print(
        f"\nsync() designs, {commits} commits of {record // 1024} KiB each "
        f"({total / MIB:.0f} MiB in all), {client.name}:\n"
        f"  part per commit : 1 PUT/commit, {record / 1024:.0f} KiB/commit, "
        f"{parts.wall * 1000 / commits:.1f} ms and {parts.cpu * 1000 / commits:.1f} "
        f"ms CPU per commit\n"
        f"  whole segment   : 1 PUT/commit, {total / 2 / MIB:.1f} MiB/commit on average, "
        f"{whole.wall * 1000 / commits:.1f} ms and {whole.cpu * 1000 / commits:.1f} "
        f"ms CPU per commit (grows with the segment)"
    )


class CountingObjects(S3Objects):
    """The store's own client, counting the PUTs it makes and the bytes they carry."""

    puts = 0
    put_bytes = 0

    def put(self, key: str, data: bytes | Path) -> None:
        self.puts += 1
        self.put_bytes += data.stat().st_size if isinstance(data, Path) else len(data)
        super().put(key, data)


def bench_store(server: SeaweedS3, bucket: str, commits: int, spool: Path) -> None:
    """The blob store as a crawl drives it: each commit syncs the three logs after 20
    pages (a 30 KiB WARC record, a 5 KiB text record, 3 events of 200 B each)."""
    objects = CountingObjects(
        bucket,
        "store",
        endpoint=server.endpoint,
        access_key=server.access_key,
        secret_key=server.secret_key,
        region=server.region,
    )
    blobs = S3BlobStore(objects, spool=spool)
    sizes = {WARC_LOG: (30 * 1024, 1), TEXT_LOG: (5 * 1024, 1), EVENT_LOG: (200, 3)}
    writers = {spec: blobs.open_writer(spec, committed=None, max_bytes=SEGMENT) for spec in sizes}
    rng = random.Random(3)
    record = {spec: rng.randbytes(size) for spec, (size, _) in sizes.items()}
    appended = 0
    warc: list[Location] = []
    with measured() as run:
        for _ in range(commits):
            for _page in range(20):
                for spec, (_size, n) in sizes.items():
                    for _ in range(n):
                        loc = writers[spec].append(record[spec])
                        appended += loc.length
                        if spec is WARC_LOG:
                            warc.append(loc)
            for w in writers.values():
                w.sync()
    rotated = sum(len(w.segments()) - 1 for w in writers.values())
    print(
        f"\nS3BlobStore, {commits} commits of 20 pages ({appended / MIB:.0f} MiB appended, "
        f"{rotated} rotations at 64 MiB):\n"
        f"  {objects.puts / commits:.2f} PUTs per commit, "
        f"{objects.put_bytes / commits / 1024:.0f} KiB uploaded per commit "
        f"({objects.put_bytes / appended:.2f} x the bytes appended: parts, then whole "
        f"segments at rotation), {run.cpu * 1000 / commits:.1f} ms CPU and "
        f"{run.wall * 1000 / commits:.1f} ms wall per commit"
    )
    for w in writers.values():
        w.close()
    done = warc[:1000]  # closed: every segment is now one whole object
    reader = S3BlobStore.from_url(objects.url(), env=server.env())
    with measured() as reads:
        for loc in done:
            reader.read(WARC_LOG, loc)
    print(
        f"  read() of {len(done)} committed 30 KiB WARC records (finished segments): "
        f"{reads.cpu * 1000 / max(1, len(done)):.2f} s CPU and "
        f"{reads.wall * 1000 / max(1, len(done)):.2f} s wall per 1,000"
    )


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--segments", type=int, default=4, help="64 MiB segments to PUT")
    ap.add_argument("--gets", type=int, default=1000)
    ap.add_argument("--keys", type=int, default=500, help="objects under the LIST prefix")
    ap.add_argument("--only", nargs="*", help="candidate names to run")
    ap.add_argument("--commits", type=int, default=300, help="commits of the store run")
    args = ap.parse_args(argv)
    payload = os.urandom(SEGMENT)
    with tempfile.TemporaryDirectory(prefix="bench-s3-") as tmp:
        server = SeaweedS3.start(Path(tmp) / "weed")
        try:
            setup = Boto3(server, "bench", checksums=False)
            setup.s3.create_bucket(Bucket="bench")
            for i in range(args.keys):
                setup.put(f"list/trawl-{i:05d}.jsonl", b"x")
            print(f"SeaweedFS at {server.endpoint}; python {sys.version.split()[0]}")
            header = (
                f"{'client':40} {'PUT CPU s/GiB':>13} {'PUT MiB/s':>9} "
                f"{'GET CPU s/1k':>12} {'GET wall s/1k':>13} {'4thr CPU s/1k':>13} "
                f"{'4thr wall s/1k':>14} {'LIST CPU ms':>11} {'LIST wall ms':>12}"
            )
            print(header)
            for tag, make in _candidates(server, "bench"):
                if args.only and tag not in args.only:
                    continue
                try:
                    client = make()
                except ImportError as exc:
                    print(f"{tag:40} not installed ({exc.name})")
                    continue
                try:
                    r = bench_client(client, tag, payload, args.segments, args.gets, "list/")
                except Exception as exc:  # a candidate that fails against SeaweedFS
                    print(f"{client.name:40} FAILED: {type(exc).__name__}: {exc}"[:300])
                    continue
                finally:
                    client.close()
                print(
                    f"{client.name:40} {r['put_cpu_per_gib']:13.2f} {r['put_mib_s']:9.0f} "
                    f"{r['get_cpu_per_1000']:12.2f} {r['get_wall_per_1000']:13.2f} "
                    f"{r['get4_cpu_per_1000']:13.2f} {r['get4_wall_per_1000']:14.2f} "
                    f"{r['list_cpu_ms']:11.1f} {r['list_wall_ms']:12.1f}",
                    flush=True,
                )
            chosen = Obstore(server, "bench")
            bench_sync_designs(chosen, commits=100, record=256 * 1024)
            bench_store(server, "bench", args.commits, Path(tmp) / "spool")
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
