"""What a search answers: its hits, each shown with a snippet of its text read back
from its crawl's text store (the index stores no body)."""

from __future__ import annotations

import logging
import zlib
from dataclasses import dataclass

import tantivy

from trawl.archive.textstore import decode_record
from trawl.index.gather import Group, Member
from trawl.index.plan import Plan
from trawl.index.schema import PLAIN, body_field, normalise, title_field
from trawl.index.snippet import SNIPPET_CHARS, snippet
from trawl.models import Location
from trawl.storage.blobs import TEXT_LOG, BlobStore

__all__ = ["Hit", "SearchResults", "hit"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Hit:
    title: str
    snippet: str  # HTML: escaped text, query terms in <mark>
    link: str
    host: str
    score: float
    fetched_at: float  # Unix time
    language: str | None
    crawl: str | None = None  # the crawl whose copy this is


@dataclass(frozen=True)
class SearchResults:
    query: str
    results: list[Hit]
    total: int
    took_ms: float
    corrected: str | None  # the query as run, when a word was corrected
    page: int
    size: int
    correction_skipped: bool = False  # the budget ran out: some typos may be left


def hit(
    plan: Plan,
    generators: dict[tuple[int, str], tantivy.SnippetGenerator],
    group: Group,
) -> Hit:
    """The hit shown for ``group``: its text read back for the snippet (``generators``
    caches one snippet generator per index and language for the query)."""
    member: Member = group.shown
    view = member.run.view
    doc = member.document()
    code = str(doc.get_first("code") or PLAIN)
    body = _body(member.run.shard.blobs, doc)
    generator = None
    if plan.highlight is not None:
        generator = generators.get((member.run.position, code))
        if generator is None:
            # One per index, language field and query: it holds the query's weights.
            generator = tantivy.SnippetGenerator.create(
                view.searcher, plan.highlight, view.schema, body_field(code)
            )
            generator.set_max_num_chars(SNIPPET_CHARS)
            generators[(member.run.position, code)] = generator
    language = doc.get_first("language")
    text = tantivy.Document()  # what the generator highlights: the body as indexed
    text.add_text(body_field(code), body)
    return Hit(
        title=str(doc.get_first(title_field(code)) or ""),
        snippet=snippet(generator, text, body),
        link=str(doc.get_first("url")),
        host=str(doc.get_first("host")),
        score=group.score,
        fetched_at=float(doc.get_first("fetched_at") or 0.0),
        language=str(language) if language else None,
        crawl=member.run.shard.crawl,
    )


def _body(blobs: BlobStore, doc: tantivy.Document) -> str:
    """The page's text as it was indexed, read from its text record ("" if lost)."""
    where = Location(
        str(doc.get_first("text_file")),
        int(doc.get_first("text_offset") or 0),
        int(doc.get_first("text_length") or 0),
    )
    try:
        record = decode_record(blobs.read(TEXT_LOG, where), where)
    except (OSError, ValueError, EOFError, zlib.error) as exc:
        log.warning("text record of %s unreadable: %s", doc.get_first("url"), exc)
        return ""
    return normalise(str(record.get("text") or ""))
