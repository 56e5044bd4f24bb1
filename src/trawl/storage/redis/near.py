"""The near-duplicate index in Redis, shared live by every worker of a crawl.

Founders are claimed, not cached: ``claim`` is one Lua script on the index's keys
(one hash tag, ``{<crawl>/n}``: one shard) that looks for a near copy and, finding
none, adds the founder, so of two workers keeping near copies at the same moment
only one founds and the other is told whose copy it holds. ``find`` reads the same
keys, so a founder is seen by every worker as soon as it is claimed.

Keys: ``:e`` hash order -> ``doc TAB cluster TAB signature``; ``:of`` hash doc ->
order; ``:seq`` the next order; the bands in ``BUCKETS`` small hashes ``:b:<i>``, band
key (8 bytes) -> the orders of the founders with that band, the bucket chosen by the
key's low bits; ``:bx`` the lists too long for a bucket (its field there says ``x``);
and per worker session ``:claims:<session>`` hash order -> its band keys, the claims
not yet committed. A commit's acknowledgements drop the session's claims (they are
final); a crashed session's claims are given back by whoever rolls it back, except
those whose page the crash left stored (the page is final, so is its founder).

Why buckets: one hash of every band (30 fields a founder) took Redis some 75 to 90
bytes a field in its hash table; a small hash of binary fields is kept in Redis's
compact encoding (a listpack, up to ``hash-max-listpack-entries`` 128 fields of at
most ``hash-max-listpack-value`` 64 bytes), some 18 bytes a field
(``bench/bench_near_redis.py``: 690 rather than 2,444 bytes a founder at 169,464).
2^18 buckets pay most from some 50,000 founders (below, a bucket holds a key or two
and its own overhead, no more than the one hash took) to a million (past it, the
buckets grow into hash tables of short binary fields, no larger a field than the one
hash's). The price is CPU on the index's shard: 32 small keys read a lookup rather
than 32 fields of one, some 35 % more a claim and 65 % more a lookup.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trawl.dedup.minhash import MinHasher, Signature
from trawl.dedup.near import NearMatch
from trawl.storage.redis.conn import Arg, Conn, Pipe
from trawl.storage.redis.keys import Keys, text
from trawl.storage.redis.small import RedisMeta

LAYOUT_KEY = "near.minhash"  # the meta key the other backends keep the layout under
BUCKETS = 1 << 18  # band hashes (a power of two: a key's low bits choose)
# A band's list of founders longer than this (bytes) moves to ``:bx``: a longer value
# would turn its whole bucket into a hash table (``hash-max-listpack-value`` 64).
LONG = 56
_FIELD = 8  # bytes of a band key as a field
_LOW = BUCKETS - 1
_DELETE_CHUNK = 1000  # keys a DEL names when a layout is replaced

# Lua: a band's list of founders, from what its bucket holds (or the long lists' hash).
_LIST = r"""
local function list(v, long, f)
  if v == 'x' then return redis.call('HGET', long, f) end
  return v
end
"""

# Lua: order n added to a band's list, moved to the long lists' hash past ``longest``;
# v is what its bucket holds (false: nothing), as read before.
_ADD = r"""
local function add(bucket, long, f, n, longest, v)
  if v == 'x' then
    redis.call('HSET', long, f, redis.call('HGET', long, f) .. ' ' .. n)
  elseif v and #v + 1 + #n > longest then
    redis.call('HSET', long, f, v .. ' ' .. n)
    redis.call('HSET', bucket, f, 'x')
  else
    redis.call('HSET', bucket, f, v and (v .. ' ' .. n) or n)
  end
end
"""

# best(entry, long, first key, sig, perms, threshold, first field, read): the best
# stored founder sharing a band with the signature, {doc, cluster, equal values} or
# nil; the earliest claimed wins a tie, as in MemoryNearIndex. The field ARGV[i] is in
# bucket KEYS[first key + i - first field]; what each bucket holds of it is kept in
# read[i] (a claim adds to it next without reading it again).
_BEST = (
    _LIST
    + r"""
local function parts(e)
  local t1 = string.find(e, '\t', 1, true)
  local t2 = string.find(e, '\t', t1 + 1, true)
  return string.sub(e, 1, t1 - 1), string.sub(e, t1 + 1, t2 - 1), string.sub(e, t2 + 1)
end
local function best(entry, long, key0, sig, perms, thr, first, read)
  local seen, best_n, best_eq = {}, nil, -1
  for i = first, #ARGV do
    local held = redis.call('HGET', KEYS[key0 + i - first], ARGV[i])
    read[i] = held
    local v = list(held, long, ARGV[i])
    if v then
      for o in string.gmatch(v, '%S+') do
        if not seen[o] then
          seen[o] = true
          local e = redis.call('HGET', entry, o)
          if e then
            local _, _, s = parts(e)
            local eq = 0
            for k = 1, perms * 4, 4 do
              if string.sub(s, k, k + 3) == string.sub(sig, k, k + 3) then eq = eq + 1 end
            end
            local n = tonumber(o)
            if eq > best_eq or (eq == best_eq and n < best_n) then best_n, best_eq = n, eq end
          end
        end
      end
    end
  end
  if best_n == nil or best_eq / perms < thr then return nil end
  local doc, cluster = parts(redis.call('HGET', entry, tostring(best_n)))
  return {doc, cluster, best_eq}
end
"""
)

# KEYS entry, long, buckets...; ARGV signature, perms, threshold, band keys...
FIND = (
    _BEST
    + r"""
return best(KEYS[1], KEYS[2], 3, ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), 4, {}) or false
"""
)

# KEYS entry, of, seq, claims, long, buckets...; ARGV signature, perms, threshold, doc,
# cluster, check ('1': look for a near copy first), longest list in a bucket, band keys...
CLAIM = (
    _BEST
    + _ADD
    + r"""
if redis.call('HEXISTS', KEYS[2], ARGV[4]) == 1 then return false end
local read = {}
if ARGV[6] == '1' then
  local m = best(KEYS[1], KEYS[5], 6, ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), 8, read)
  if m then return m end
end
local n = tostring(redis.call('INCR', KEYS[3]))
redis.call('HSET', KEYS[1], n, ARGV[4] .. '\t' .. ARGV[5] .. '\t' .. ARGV[1])
redis.call('HSET', KEYS[2], ARGV[4], n)
local longest = tonumber(ARGV[7])
local fields = {}
for i = 8, #ARGV do
  local bucket, f, v = KEYS[i - 2], ARGV[i], read[i]
  if v == nil then v = redis.call('HGET', bucket, f) end
  add(bucket, KEYS[5], f, n, longest, v)
  fields[#fields + 1] = f
end
redis.call('HSET', KEYS[4], n, table.concat(fields))
return false
"""
)

# KEYS entry, of, claims, long, buckets...; ARGV n, the n orders to give back (the
# rest are final), then (order, band key) pairs, the band key's bucket KEYS[4 + j] for
# the j-th pair.
RELEASE = r"""
local n = tonumber(ARGV[1])
for i = 2, n + 1 do
  local o = ARGV[i]
  local e = redis.call('HGET', KEYS[1], o)
  if e then
    redis.call('HDEL', KEYS[2], string.sub(e, 1, string.find(e, '\t', 1, true) - 1))
    redis.call('HDEL', KEYS[1], o)
  end
  redis.call('HDEL', KEYS[3], o)
end
local j = 0
for i = n + 2, #ARGV, 2 do
  j = j + 1
  local o, f, bucket = ARGV[i], ARGV[i + 1], KEYS[4 + j]
  local where, v = bucket, redis.call('HGET', bucket, f)
  if v == 'x' then where, v = KEYS[4], redis.call('HGET', KEYS[4], f) end
  if v then
    local keep = {}
    for x in string.gmatch(v, '%S+') do if x ~= o then keep[#keep + 1] = x end end
    if #keep == 0 then
      redis.call('HDEL', bucket, f)
      if where ~= bucket then redis.call('HDEL', where, f) end
    else redis.call('HSET', where, f, table.concat(keep, ' ')) end
  end
end
return n
"""

# KEYS long, buckets...; ARGV longest, then (order, band key) pairs, the band key's
# bucket KEYS[1 + j] for the j-th pair: founders banded again (another layout). An
# order already in the list is not added again (two workers banding at once).
BAND = (
    _LIST
    + _ADD
    + r"""
local j = 0
for i = 2, #ARGV, 2 do
  j = j + 1
  local bucket, f, n = KEYS[1 + j], ARGV[i + 1], ARGV[i]
  local v = redis.call('HGET', bucket, f)
  local orders = list(v, KEYS[1], f)
  if not (orders and string.find(' ' .. orders .. ' ', ' ' .. n .. ' ', 1, true)) then
    add(bucket, KEYS[1], f, n, tonumber(ARGV[1]), v)
  end
end
return j
"""
)


class NearKeys:
    """The near index's key names in one crawl (one hash tag)."""

    def __init__(self, keys: Keys) -> None:
        base = keys.near
        self.entry, self.of, self.seq, self.long = (f"{base}:{k}" for k in ("e", "of", "seq", "bx"))
        self.one_hash = f"{base}:b"  # the bands before buckets (one hash of them all)
        self._base = base

    def claims(self, session: str) -> str:
        return f"{self._base}:claims:{session}"

    def bucket(self, band_key: bytes) -> str:
        """The bucket that holds a band key (its low bits)."""
        return f"{self._base}:b:{int.from_bytes(band_key, 'little') & _LOW}"

    def fields(self, hasher: MinHasher, signature: Signature) -> tuple[list[str], list[bytes]]:
        """A signature's band keys as fields (8 bytes each), and their buckets."""
        prefix = f"{self._base}:b:"
        keys = hasher.band_keys(signature)
        return [f"{prefix}{k & _LOW}" for k in keys], [
            k.to_bytes(_FIELD, "little", signed=True) for k in keys
        ]

    def bands(self, buckets: int) -> Iterator[str]:
        """Every key the bands may be in, laid out in ``buckets`` buckets (0: one hash)."""
        yield self.one_hash
        yield self.long
        for i in range(buckets):
            yield f"{self._base}:b:{i}"


def layout(hasher: MinHasher) -> str:
    """The index's layout as kept in the crawl's meta: the signatures' and bands', and
    the buckets'."""
    return f"{hasher.layout};buckets={BUCKETS}"


def _buckets_of(layout: str) -> int:
    """The buckets of a stored layout (0: before buckets, one hash of every band)."""
    for part in layout.split(";"):
        name, _, value = part.partition("=")
        if name == "buckets" and value.isdigit():
            return int(value)
    return 0


def _parts(entry: bytes) -> tuple[str, str, bytes]:
    doc, cluster, signature = entry.split(b"\t", 2)
    return doc.decode(), cluster.decode(), signature


def _delete(conn: Conn, names: Iterator[str]) -> None:
    pipe = conn.pipeline()
    chunk: list[str] = []
    for name in names:
        chunk.append(name)
        if len(chunk) == _DELETE_CHUNK:
            pipe.call("DEL", *chunk)
            chunk = []
    if chunk:
        pipe.call("DEL", *chunk)
    pipe.execute()


def release_claims(conn: Conn, keys: Keys, session: str) -> int:
    """Give back what ``session`` claimed and did not commit; claims whose page is
    stored stay (the crash came after the outputs). Returns how many were given back."""
    nk = NearKeys(keys)
    claims = nk.claims(session)
    claimed = {text(o) or "": bytes(v) for o, v in conn.call("HGETALL", claims).items()}
    if not claimed:
        return 0
    orders = list(claimed)
    entries = conn.call("HMGET", nk.entry, *orders)
    docs = [None if e is None else _parts(e)[0] for e in entries]
    pipe = conn.pipeline()
    for doc in docs:
        pipe.call("HEXISTS", keys.pages, doc or "")
    stored = pipe.execute()
    back = [o for o, d, s in zip(orders, docs, stored, strict=True) if d is None or not int(s)]
    for i in range(0, len(back), 64):  # each script a bounded size; the same again is no harm
        chunk = back[i : i + 64]
        pairs: list[Arg] = []
        buckets: list[str] = []
        for order in chunk:
            fields = claimed[order]
            for k in range(0, len(fields) - _FIELD + 1, _FIELD):
                field = fields[k : k + _FIELD]
                pairs += [order, field]
                buckets.append(nk.bucket(field))
        conn.script(
            RELEASE, [nk.entry, nk.of, claims, nk.long, *buckets], [len(chunk), *chunk, *pairs]
        )
    conn.call("DEL", claims)
    return len(back)


class RedisNearIndex:
    """``NearDupIndex`` read and claimed in Redis by every worker at once."""

    def __init__(
        self, conn: Conn, keys: Keys, session: str, meta: RedisMeta, hasher: MinHasher
    ) -> None:
        self._conn, self._hasher = conn, hasher
        self._keys = NearKeys(keys)
        self._claims = self._keys.claims(session)
        self._claimed = False
        # The last signature's buckets and band keys: a page kept is looked up, then
        # claimed, with the same signature (22 us each time on the bench's machine).
        self._last: tuple[Signature, tuple[list[str], list[bytes]]] | None = None
        stored = meta.get(LAYOUT_KEY)
        ours = layout(hasher)
        if stored is not None and stored != ours:
            bands = self._keys.bands(_buckets_of(stored))
            if stored.split(";")[0] != hasher.signature_layout:
                k = self._keys  # signatures no longer comparable
                _delete(conn, iter([k.entry, k.of, k.seq, *bands]))
            else:
                _delete(conn, bands)
                self._band_again()
        meta.set(LAYOUT_KEY, ours)

    @property
    def hasher(self) -> MinHasher:
        return self._hasher

    def _fields(self, signature: Signature) -> tuple[list[str], list[bytes]]:
        last = self._last
        if last is not None and last[0] == signature:
            return last[1]
        found = self._keys.fields(self._hasher, signature)
        self._last = (signature, found)
        return found

    def _band_again(self) -> None:
        """Band the stored founders again (another band count or bucket layout, the same
        signatures): a thousand at a time, as they are read."""
        k = self._keys
        cursor: Any = 0
        while True:
            cursor, rows = self._conn.call("HSCAN", k.entry, cursor, "COUNT", 1000)
            pairs: list[Arg] = []
            buckets: list[str] = []
            for order, entry in rows.items():
                names, fields = k.fields(self._hasher, _parts(entry)[2])
                buckets += names
                for field in fields:
                    pairs += [order, field]
            if buckets:
                self._conn.script(BAND, [k.long, *buckets], [LONG, *pairs])
            if int(cursor) == 0:
                break

    def _match(self, answer: Any) -> NearMatch | None:
        if not answer:
            return None
        doc, cluster, equal = answer
        return NearMatch(int(equal) / self._hasher.perms, text(cluster) or "", text(doc) or "")

    def _claim(self, signature: Signature, cluster_id: str, doc_key: str, check: bool) -> Any:
        self._claimed = True
        k = self._keys
        h = self._hasher
        buckets, fields = self._fields(signature)
        args: list[Arg] = [signature, h.perms, repr(h.threshold), doc_key, cluster_id]
        args += ["1" if check else "0", LONG, *fields]
        return self._conn.script(
            CLAIM, [k.entry, k.of, k.seq, self._claims, k.long, *buckets], args
        )

    def add(self, signature: Signature, cluster_id: str, doc_key: str) -> None:
        self._claim(signature, cluster_id, doc_key, check=False)

    def claim(self, signature: Signature, cluster_id: str, doc_key: str) -> NearMatch | None:
        return self._match(self._claim(signature, cluster_id, doc_key, check=True))

    def find(self, signature: Signature) -> NearMatch | None:
        h = self._hasher
        buckets, fields = self._fields(signature)
        args: list[Arg] = [signature, h.perms, repr(h.threshold), *fields]
        return self._match(
            self._conn.script(FIND, [self._keys.entry, self._keys.long, *buckets], args)
        )

    def count(self) -> int:
        return int(self._conn.call("HLEN", self._keys.of))

    @property
    def claimed(self) -> bool:
        """Founders claimed since the last commit (made final at the next)."""
        return self._claimed

    def acknowledge(self, pipe: Pipe) -> None:
        """The claims since the last commit are final (queued last in a commit)."""
        if self._claimed:
            pipe.call("DEL", self._claims)
            self._claimed = False
