"""The floors of bench_profile: CPU-ms per page of the bare library calls (a Lexbor
parse, a gzip member, a pycld2 detection, a tantivy add, an orjson dump, a UTF-8
decode, an aiohttp GET) on a crawl's own bodies (from its WARC) and texts (from its
text store), timed with ``time.process_time``."""

from __future__ import annotations

import asyncio
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["floors", "read_bodies", "read_texts"]


def _timed(fn: Callable[[], object], n: int) -> float:
    """CPU-ms per item of ``fn`` (which handles ``n`` items)."""
    started = time.process_time()
    fn()
    return 1000 * (time.process_time() - started) / max(1, n)


def read_bodies(data: Path, limit: int) -> list[tuple[str, bytes]]:
    """(URL, body) of up to ``limit`` 200 HTML responses from the crawl's WARC files."""
    from warcio.archiveiterator import ArchiveIterator

    out: list[tuple[str, bytes]] = []
    for path in sorted((data / "warc").glob("*.warc.gz")):
        with path.open("rb") as f:
            for record in ArchiveIterator(f):
                if record.rec_type != "response" or record.http_headers is None:
                    continue
                if record.http_headers.get_statuscode() != "200":
                    continue
                ctype = record.http_headers.get_header("Content-Type") or ""
                if "html" not in ctype:
                    continue
                out.append(
                    (
                        record.rec_headers.get_header("WARC-Target-URI"),
                        record.content_stream().read(),
                    )
                )
                if len(out) >= limit:
                    return out
    return out


def read_texts(data: Path, limit: int) -> list[dict[str, Any]]:
    from trawl.archive.textstore import read_text_files

    out = []
    for record in read_text_files(sorted((data / "text").glob("*.jsonl.gz"))):
        out.append(record)
        if len(out) >= limit:
            break
    return out


def floors(data: Path, port: int, limit: int) -> dict[str, float]:
    """CPU-ms per page of the bare library calls on the crawl's own bodies and texts."""
    import orjson
    import pycld2
    from isal import isal_zlib
    from selectolax.lexbor import LexborHTMLParser

    bodies = read_bodies(data, limit)
    texts = read_texts(data, limit)
    nb, nt = max(1, len(bodies)), max(1, len(texts))
    html = [b.decode("utf-8", "replace") for _, b in bodies]
    out: dict[str, float] = {}
    out["charset, decode"] = _timed(lambda: [b.decode("utf-8", "replace") for _, b in bodies], nb)
    out["parse (Lexbor)"] = _timed(lambda: [LexborHTMLParser(h) for h in html], nb)

    def isal_gz() -> None:
        for _, b in bodies:
            z = isal_zlib.compressobj(2, isal_zlib.DEFLATED, 31)
            z.compress(b)
            z.flush()

    def zlib_gz() -> None:
        for _, b in bodies:
            z = zlib.compressobj(3, zlib.DEFLATED, 31)
            z.compress(b)
            z.flush()

    out["gzip (WARC, text records)"] = _timed(isal_gz, nb)
    out["gzip zlib level 3 (body)"] = _timed(zlib_gz, nb)
    body_texts = [t.get("text") or "" for t in texts]
    out["language id"] = _timed(
        lambda: [pycld2.detect(t[:20_000], returnVectors=False) for t in body_texts], nt
    )
    out["text log"] = _timed(
        lambda: [isal_zlib.compress(orjson.dumps(t) + b"\n", 2) for t in texts], nt
    )
    out["index (tantivy)"] = _tantivy_floor(texts)
    urls_ = [u for u, _ in bodies]
    out["HTTP client"] = _http_floor(urls_, port)
    return out


def _tantivy_floor(texts: list[dict[str, Any]]) -> float:
    """CPU-ms per text of a bare add (title and body, in trawl's schema and analyzers,
    no keys, no deletes, no lexicon) and one commit, the indexing threads included."""
    import tantivy

    from trawl.index.schema import body_field, field_code, open_index, title_field

    with tempfile.TemporaryDirectory() as scratch:
        index = open_index(Path(scratch))
        writer = index.writer(64 * 1024 * 1024, 1)

        def add() -> None:
            for t in texts:
                code = field_code(t.get("language"))
                doc = tantivy.Document()
                doc.add_text(title_field(code), t.get("title") or "")
                doc.add_text(body_field(code), t.get("text") or "")
                writer.add_document(doc)
            writer.commit()
            writer.wait_merging_threads()

        return _timed(add, len(texts))


def _http_floor(targets: list[str], port: int) -> float:
    """CPU-ms per GET of a bare aiohttp client on the same URLs (read whole, one at a
    time per host, 64 at once): what any asyncio HTTP client costs here."""
    from urllib.parse import urlsplit

    import aiohttp

    async def run() -> float:
        conn = aiohttp.TCPConnector(limit=64, limit_per_host=1)
        started = time.process_time()
        async with aiohttp.ClientSession(connector=conn) as session:
            sem = asyncio.Semaphore(64)

            async def get(url: str) -> None:
                parts = urlsplit(url)
                local = f"http://127.0.0.1:{port}{parts.path or '/'}"
                async with sem, session.get(local, headers={"Host": parts.netloc}) as resp:
                    await resp.read()

            await asyncio.gather(*(get(u) for u in targets))
        return 1000 * (time.process_time() - started) / max(1, len(targets))

    return asyncio.run(run())


# -- main --------------------------------------------------------------------------------
