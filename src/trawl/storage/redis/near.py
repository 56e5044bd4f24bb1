"""The near-duplicate index in Redis, shared live by every worker of a crawl.

Founders are claimed, not cached: ``claim`` is one Lua script on the index's keys
(one hash tag, ``{<crawl>/n}``: one shard) that looks for a near copy and, finding
none, adds the founder, so of two workers keeping near copies at the same moment
only one founds and the other is told whose copy it holds. ``find`` reads the same
keys, so a founder is seen by every worker as soon as it is claimed.

Keys: ``:entry`` hash order -> ``doc TAB cluster TAB signature``; ``:of`` hash doc ->
order; ``:bands`` hash ``band:key`` -> orders; ``:seq`` the next order; and per
worker session ``:claims:<session>`` hash order -> its band fields, the claims not
yet committed. A commit's acknowledgements drop the session's claims (they are
final); a crashed session's claims are given back by whoever rolls it back, except
those whose page the crash left stored (the page is final, so is its founder).
"""

from __future__ import annotations

from typing import Any

from trawl.dedup.minhash import MinHasher, Signature
from trawl.dedup.near import NearMatch
from trawl.storage.redis.conn import Arg, Conn, Pipe
from trawl.storage.redis.keys import Keys, text
from trawl.storage.redis.small import RedisMeta

LAYOUT_KEY = "near.minhash"  # the meta key the other backends keep the layout under

# best(entry, bands, signature, perms, threshold, first field index): the best stored
# founder sharing a band with the signature, {doc, cluster, equal values} or nil; the
# earliest claimed wins a tie, as in MemoryNearIndex.
_BEST = r"""
local function parts(e)
  local t1 = string.find(e, '\t', 1, true)
  local t2 = string.find(e, '\t', t1 + 1, true)
  return string.sub(e, 1, t1 - 1), string.sub(e, t1 + 1, t2 - 1), string.sub(e, t2 + 1)
end
local function best(entry, bands, sig, perms, thr, first)
  local seen, best_n, best_eq = {}, nil, -1
  for i = first, #ARGV do
    local v = redis.call('HGET', bands, ARGV[i])
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

# KEYS entry, bands; ARGV signature, perms, threshold, band fields...
FIND = (
    _BEST
    + r"""
return best(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), 4) or false
"""
)

# KEYS entry, bands, of, seq, claims; ARGV signature, perms, threshold, doc, cluster,
# check ('1': look for a near copy first), band fields...
CLAIM = (
    _BEST
    + r"""
if redis.call('HEXISTS', KEYS[3], ARGV[4]) == 1 then return false end
if ARGV[6] == '1' then
  local m = best(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), 7)
  if m then return m end
end
local n = tostring(redis.call('INCR', KEYS[4]))
redis.call('HSET', KEYS[1], n, ARGV[4] .. '\t' .. ARGV[5] .. '\t' .. ARGV[1])
redis.call('HSET', KEYS[3], ARGV[4], n)
local fields = {}
for i = 7, #ARGV do
  local v = redis.call('HGET', KEYS[2], ARGV[i])
  redis.call('HSET', KEYS[2], ARGV[i], v and (v .. ' ' .. n) or n)
  fields[#fields + 1] = ARGV[i]
end
redis.call('HSET', KEYS[5], n, table.concat(fields, ' '))
return false
"""
)

# KEYS entry, bands, of, claims; ARGV the orders to give back (the rest are final).
RELEASE = r"""
for i = 1, #ARGV do
  local n = ARGV[i]
  local e = redis.call('HGET', KEYS[1], n)
  if e then
    redis.call('HDEL', KEYS[3], string.sub(e, 1, string.find(e, '\t', 1, true) - 1))
    redis.call('HDEL', KEYS[1], n)
  end
  for f in string.gmatch(redis.call('HGET', KEYS[4], n) or '', '%S+') do
    local v = redis.call('HGET', KEYS[2], f)
    if v then
      local keep = {}
      for x in string.gmatch(v, '%S+') do if x ~= n then keep[#keep + 1] = x end end
      if #keep == 0 then redis.call('HDEL', KEYS[2], f)
      else redis.call('HSET', KEYS[2], f, table.concat(keep, ' ')) end
    end
  end
end
redis.call('DEL', KEYS[4])
return #ARGV
"""


class NearKeys:
    """The near index's key names in one crawl (one hash tag)."""

    def __init__(self, keys: Keys) -> None:
        base = keys.near
        self.entry, self.bands, self.of, self.seq = (f"{base}:{k}" for k in ("e", "b", "of", "seq"))
        self._base = base

    def claims(self, session: str) -> str:
        return f"{self._base}:claims:{session}"

    @property
    def all(self) -> list[str]:
        return [self.entry, self.bands, self.of, self.seq]


def _parts(entry: bytes) -> tuple[str, str, bytes]:
    doc, cluster, signature = entry.split(b"\t", 2)
    return doc.decode(), cluster.decode(), signature


def release_claims(conn: Conn, keys: Keys, session: str) -> int:
    """Give back what ``session`` claimed and did not commit; claims whose page is
    stored stay (the crash came after the outputs). Returns how many were given back."""
    nk = NearKeys(keys)
    claims = nk.claims(session)
    orders = [text(o) or "" for o in conn.call("HKEYS", claims)]
    if not orders:
        return 0
    entries = conn.call("HMGET", nk.entry, *orders)
    docs = [None if e is None else _parts(e)[0] for e in entries]
    pipe = conn.pipeline()
    for doc in docs:
        pipe.call("HEXISTS", keys.pages, doc or "")
    stored = pipe.execute()
    back = [o for o, d, s in zip(orders, docs, stored, strict=True) if d is None or not int(s)]
    conn.script(RELEASE, [nk.entry, nk.bands, nk.of, claims], back)
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
        stored = meta.get(LAYOUT_KEY)
        if stored is not None and stored != hasher.layout:
            if stored.split(";")[0] != hasher.signature_layout:
                conn.call("DEL", *self._keys.all)  # signatures no longer comparable
            else:
                self._rebuild_bands()
        meta.set(LAYOUT_KEY, hasher.layout)

    @property
    def hasher(self) -> MinHasher:
        return self._hasher

    def _fields(self, signature: Signature) -> list[str]:
        return [f"{i}:{k}" for i, k in enumerate(self._hasher.band_keys(signature))]

    def _rebuild_bands(self) -> None:
        """Band the stored founders again (another band count, same signatures)."""
        bands: dict[str, list[str]] = {}
        cursor: Any = 0
        while True:
            cursor, rows = self._conn.call("HSCAN", self._keys.entry, cursor, "COUNT", 1000)
            for order, entry in rows.items():
                for field in self._fields(_parts(entry)[2]):
                    bands.setdefault(field, []).append(order.decode())
            if int(cursor) == 0:
                break
        pipe = self._conn.pipeline()
        pipe.call("DEL", self._keys.bands)
        for field, orders in bands.items():
            ordered = sorted(orders, key=int)
            pipe.call("HSET", self._keys.bands, field, " ".join(ordered))
        pipe.execute()

    def _match(self, answer: Any) -> NearMatch | None:
        if not answer:
            return None
        doc, cluster, equal = answer
        return NearMatch(int(equal) / self._hasher.perms, text(cluster) or "", text(doc) or "")

    def _claim(self, signature: Signature, cluster_id: str, doc_key: str, check: bool) -> Any:
        self._claimed = True
        k = self._keys
        h = self._hasher
        args: list[Arg] = [signature, h.perms, repr(h.threshold), doc_key, cluster_id]
        args.append("1" if check else "0")
        return self._conn.script(
            CLAIM, [k.entry, k.bands, k.of, k.seq, self._claims], [*args, *self._fields(signature)]
        )

    def add(self, signature: Signature, cluster_id: str, doc_key: str) -> None:
        self._claim(signature, cluster_id, doc_key, check=False)

    def claim(self, signature: Signature, cluster_id: str, doc_key: str) -> NearMatch | None:
        return self._match(self._claim(signature, cluster_id, doc_key, check=True))

    def find(self, signature: Signature) -> NearMatch | None:
        h = self._hasher
        args: list[Arg] = [signature, h.perms, repr(h.threshold), *self._fields(signature)]
        return self._match(self._conn.script(FIND, [self._keys.entry, self._keys.bands], args))

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
