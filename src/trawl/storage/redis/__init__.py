"""Redis backends of every storage Protocol: a crawl shared by many stateless workers.

Open with ``trawl.storage.open.open_store(url=..., crawl=...)``: ``redis://HOST:PORT/DB``
for one server, ``redis+cluster://HOST:PORT`` for a Redis Cluster (any node).

Key layout (``P`` = ``trawl:<crawl>:``; ``{...}`` is the hash tag that picks the shard):

- per host, all on the host's shard (its scripts are single-shard):
  ``P h:{host}`` hash (``next_at``, ``admitted``, ``budget``, ``priority``,
  ``demoted``, lease ``lease_fp``/``lease_exp``/``holder``, ``s<status>`` counts);
  ``P h:{host}:u`` hash fp -> URL record (the exact seen set: the URL is in it);
  ``P h:{host}:q`` zset fp -> key (queued, ``trawl.ranking``); ``P h:{host}:w`` zset fp -> due
  (waiting); ``P h:{host}:f`` hash fp -> latest fetch record;
  ``P h:{host}:undo:<worker>`` hash fp -> record before the worker's uncommitted change.
- indexes in ``buckets`` (default 16) by crc32(host), tag ``{<crawl>/b<i>}``:
  ``P b:{..}:sched`` zset host -> when to look at it (early, never late),
  ``:prio`` hash host -> order (best queued key + host priority), ``:wait`` zset
  host -> earliest due, ``:lease`` zset host -> lease expiry, ``:hosts`` set of hosts.
- crawl-wide: ``P {<crawl>/g}:meta``, ``:counters``, ``:counts`` (URLs per status),
  ``:sessions`` (zset worker -> heartbeat deadline), ``:sessions:owner:<worker>``
  (who has a session open), ``:wake`` (list: a token wakes an idle worker);
  ``P {<crawl>/p}:pages``, ``:order``, ``:seq``, ``:unindexed``, ``:dups``;
  ``P {<crawl>/q}:stream`` (the parse queue), ``:ids``, ``:seq``;
  ``P {<crawl>/n}:near`` (near-index founders);
  ``P s:{<crawl>/s/<worker>}`` set of hosts a worker leases or changed.
- ``P r:{origin}`` robots answer; ``P o:{origin}`` hash kind -> origin file.
- shared by every crawl id: ``trawl:hosts:{host}`` the host lease across crawls,
  ``trawl:holder:{holder}`` a lease holder's beat (``hostleases.py``).
- learned URL equivalences, on the host's shard: ``P x:{host}`` hash rule key ->
  ``<state>|<body>``, ``:n`` hash rule key -> URLs rewritten, ``:log`` hash
  ``<key>\n<url>`` -> the rewrite; crawl-wide ``P {<crawl>/g}:rulehosts`` set of hosts.

docs/redis.md tells what ``commit`` guarantees and how a crashed worker is undone.
"""

from trawl.storage.redis.reader import RedisCrawlReader
from trawl.storage.redis.store import RedisCrawlStore

__all__ = ["RedisCrawlReader", "RedisCrawlStore"]
