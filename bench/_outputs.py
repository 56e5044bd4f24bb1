"""The outputs check of ``bench_crawl.py --outputs``: did a change alter what trawl keeps?

Three comparisons, the last two exact:

1. **Crawls**: what each crawl kept (every URL's outcome, the kept documents, index
   hits of ``QUERIES``) against the first run's. Two crawls of one web are not
   identical even with the same code: which of two near copies is parsed first (and
   founds the cluster) is a race between parse workers, and URL rules are learned at
   slightly different moments. So compare a change's differences with those of two
   runs of the same code (``--repeat 2``).
2. **Parses**: every page of the first run's WARC (the same bytes) through each
   build's ``parse_page`` with the crawl's parse options: title, text, language,
   links, anchors, directives, content hash, MinHash signature, ... per URL.
3. **Index**: each build rebuilds the index of a copy of the first run's data
   directory (``trawl index``: the same documents) and answers ``QUERIES`` (words, a
   phrase, OR, NOT, misspellings that the lexicon corrects): totals, corrections and
   the top 20 (link and score) must be the same.

Run as ``python bench/_outputs.py parse-digest DATA OUT`` (step 2, one build: the
``PYTHONPATH`` chooses which).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

# Index queries: words of SampleWeb's vocabulary (common to rare), two words, a phrase,
# OR and NOT, and misspellings (typo correction draws on the lexicon).
QUERIES = (
    "water",
    "time",
    "government",
    "history",
    "music",
    "garden",
    "island",
    "energy",
    "market",
    "window",
    "rabbit",
    "dublin",
    "water island",
    '"the new time"',
    "market OR garden",
    "music -history",
    "goverment",
    "histroy musci",
)


def _trawl(*args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(
        [sys.executable, "-m", "trawl", *args], check=True, capture_output=True, text=True, env=env
    ).stdout


def hits(data: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Each query's total, correction and top 20 (score and link)."""
    out: dict[str, Any] = {}
    for query in QUERIES:
        answer = json.loads(
            _trawl("search", "--data", str(data), "--json", "--limit", "20", query, env=env)
        )
        top = sorted(f"{r['score']:.4f} {r['link']}" for r in answer["results"])
        out[query] = {"total": answer["total"], "corrected": answer["corrected"], "top": top}
    return out


def crawl_outputs(data: Path, work: Path) -> dict[str, Any]:
    """What a crawl kept: URL outcomes (a duplicate's first URL left out), documents
    (URL -> content hash, title, language, text digest) and index hits."""
    states: dict[str, str] = {}
    for line in _trawl("stats", "--data", str(data), "--urls").splitlines():
        status, reason, url = line.split("\t", 2)
        states[url] = f"{status}: {re.sub(r' of .*', ' of ...', reason)}"
    out = work / f"export-{data.name}"
    _trawl("export", "--data", str(data), "--format", "jsonl", "--out", str(out), "--overwrite")
    docs: dict[str, list[str]] = {}
    for path in sorted(out.glob("*.jsonl*")):
        with gzip.open(path, "rt") if path.suffix == ".gz" else path.open() as f:
            for line in f:
                d = json.loads(line)
                text = hashlib.sha256(d["text"].encode()).hexdigest()[:16]
                docs[d["url"]] = [d["content_hash"], d["title"], str(d["language"]), text]
    shutil.rmtree(out, ignore_errors=True)
    return {"states": states, "documents": docs, "hits": hits(data)}


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """What differs between two ``crawl_outputs`` (or two of ``hits`` under "hits",
    or two parse digests under "pages")."""
    out = []
    for key in ("states", "documents", "pages"):
        if key not in a:
            continue
        x, y = a[key], b[key]
        only_a, only_b = sorted(x.keys() - y.keys()), sorted(y.keys() - x.keys())
        changed = sorted(k for k in x.keys() & y.keys() if x[k] != y[k])
        if only_a or only_b or changed:
            line = (
                f"{key}: {len(x):,} vs {len(y):,}; only in the first {len(only_a)}, only in "
                f"the second {len(only_b)}, different {len(changed)}"
            )
            if changed:
                line += f"; e.g. {changed[0]}: {x[changed[0]]} vs {y[changed[0]]}"
            if only_a or only_b:
                line += f"; e.g. {(only_a or only_b)[0]}"
            out.append(line)
    for query, x in a.get("hits", {}).items():
        y = b["hits"].get(query) or {}
        if x != y:
            what = [k for k in ("total", "corrected", "top") if x.get(k) != y.get(k)]
            out.append(
                f"hits of {query!r}: {', '.join(what)} differ (total {x['total']} vs "
                f"{y.get('total')}, corrected {x['corrected']!r} vs {y.get('corrected')!r})"
            )
    return out


def index_hits(data: Path, work: Path, name: str, env: dict[str, str] | None) -> dict[str, Any]:
    """The hits of an index rebuilt by one build (``env``) on a copy of ``data``."""
    copy = work / f"index-check-{name}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(data, copy, ignore=shutil.ignore_patterns("index"))
    _trawl("index", "--data", str(copy), "--quiet", env=env)
    answer = {"hits": hits(copy, env)}
    shutil.rmtree(copy, ignore_errors=True)
    return answer


def parse_digests(data: Path, out: Path, env: dict[str, str] | None) -> dict[str, Any]:
    """Run ``parse-digest`` with one build; its per-URL digests."""
    subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "parse-digest", str(data), str(out)],
        check=True,
        env=env,
    )
    return {"pages": json.loads(out.read_text())}


def parse_digest_main(data: Path, out: Path) -> None:
    """Every 200 HTML response of ``data``'s WARC through this build's ``parse_page``,
    with the crawl's own parse options; a digest of each ParsedPage's fields."""
    from dataclasses import MISSING, fields

    from warcio.archiveiterator import ArchiveIterator

    from trawl import wire
    from trawl.config import CrawlConfig
    from trawl.dedup.minhash import MinHasher
    from trawl.fetch.http import decode_content
    from trawl.parse.page import PageInput, parse_page

    config = CrawlConfig(data_dir=data)
    options = wire.parse_options(config, MinHasher() if config.near_duplicates else None)
    digests: dict[str, str] = {}
    for path in sorted((data / "warc").glob("*.warc.gz")):
        with path.open("rb") as f:
            for record in ArchiveIterator(f):
                http = record.http_headers
                if record.rec_type != "response" or http is None:
                    continue
                if http.get_statuscode() != "200":
                    continue
                headers = tuple((str(k), str(v)) for k, v in http.headers)
                ctype = http.get_header("Content-Type")
                if ctype is None or "html" not in ctype:
                    continue
                body, _ = decode_content(
                    record.raw_stream.read(), http.get_header("Content-Encoding"), 10 << 20
                )
                url = record.rec_headers.get_header("WARC-Target-URI")
                page = parse_page(PageInput(url, headers, body, ctype.split(";")[0]), options)
                # A field at its default is left out: a field one build added (with a
                # default) changes no digest of a page that does not use it.
                values = repr(
                    [
                        (f.name, getattr(page, f.name))
                        for f in fields(page)
                        if f.default is MISSING or getattr(page, f.name) != f.default
                    ]
                )
                digests[url] = hashlib.sha256(values.encode()).hexdigest()[:16]
    out.write_text(json.dumps(digests))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "parse-digest":
        parse_digest_main(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        sys.exit(__doc__)
