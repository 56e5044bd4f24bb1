"""The full-text index of stored pages (tantivy) and the queries over it.

    with Searcher(data_dir / "index") as s:
        results = s.search('"distinctive phrase" site:example.org')

    crawls = [IndexSpec("a", a_dir / "index"), IndexSpec("b", b_dir / "index")]
    with Searcher(indexes=lambda: crawls) as s:     # ranked as one index
        results = s.search("harbour lights", crawl=None)

The crawl is the one writer (``Indexer``); any number of processes may search.
"""

from trawl.index.hits import Hit, SearchResults
from trawl.index.query import QueryError
from trawl.index.search import Searcher
from trawl.index.shard import IndexSpec
from trawl.index.writer import Indexer

__all__ = ["Hit", "IndexSpec", "Indexer", "QueryError", "SearchResults", "Searcher"]
