"""Host leases shared by every crawl of a Redis deployment, whatever its crawl id.

A crawl's own keys live under ``trawl:<crawl>:``, so two crawls over one Redis would
each keep their own politeness; ``trawl:hosts:{<host>}`` is one hash per host for all
of them (holder, ``expires``, ``next_at``, and ``a:<holder>`` = "gap until" per crawl
that asked lately), read and changed by one Lua script per call on the host's shard.
The rules are those of ``storage/leases.py``; the key expires an hour after nothing in
it matters. Workers run on many machines, so a holder's process cannot be checked:
instead each holder beats (``trawl:holder:{<holder>}``, set for ``BEAT_TTL`` seconds,
renewed about once a second by the crawl's loop and before each acquire), and a lease
whose holder has stopped beating (a worker killed with SIGKILL) is taken over at once
(a second script call, only then).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

import redis

from trawl.errors import StorageError
from trawl.storage.base import SharedHost
from trawl.storage.leases import ASK_MEMORY, MIN_POLL
from trawl.storage.redis.conn import Conn, connect
from trawl.storage.redis.keys import arg, num, shared_host, text
from trawl.storage.retry import never

__all__ = ["RedisHostLeases"]

_READ = r"""
local function fmt(x) return string.format('%.6f', x) end
local function load(key, now, prune)
  local h = redis.call('HGETALL', key)
  local row = {holder = nil, expires = 0, next_at = 0, gap = 0, last = 0}
  for i = 1, #h, 2 do
    local k, v = h[i], h[i + 1]
    if k == 'holder' then row.holder = v
    elseif k == 'expires' then row.expires = tonumber(v)
    elseif k == 'next_at' then row.next_at = tonumber(v)
    elseif string.sub(k, 1, 2) == 'a:' then
      local sp = string.find(v, ' ', 1, true)
      local gap, till = tonumber(string.sub(v, 1, sp - 1)), tonumber(string.sub(v, sp + 1))
      if till > now then
        if gap > row.gap then row.gap = gap end
        if till > row.last then row.last = till end
      elseif prune then
        redis.call('HDEL', key, k)
      end
    end
  end
  return row
end
local function keep(key, row, now)
  local last = math.max(row.next_at, row.expires, row.last)
  redis.call('PEXPIRE', key, math.floor((math.max(last - now, 0) + 3600) * 1000))
end
"""

# KEYS: the host's lease hash. ARGV: holder, now, ttl, min poll, a holder known dead
# ('' none), the caller's gap after a response. Returns nil when taken, else {the time
# worth asking again, the holder whose lease is in the way ('' none)}. A dead holder's
# live lease counts as released now (storage/leases.py ``acquire``).
_ACQUIRE = (
    _READ
    + r"""
local now = tonumber(ARGV[2])
local row = load(KEYS[1], now, false)
local other = row.holder
if other and other ~= '' and other ~= ARGV[1] and row.expires > now then
  if other ~= ARGV[5] then
    local wait = math.max(row.next_at, now + math.max(row.gap, tonumber(ARGV[4])))
    return {fmt(math.min(row.expires, wait)), other}
  end
  row.next_at = math.max(row.next_at, now + math.max(row.gap, tonumber(ARGV[6])))
  row.expires = 0
  redis.call('HDEL', KEYS[1], 'holder')
  redis.call('HSET', KEYS[1], 'expires', '0', 'next_at', fmt(row.next_at))
  keep(KEYS[1], row, now)
end
if row.next_at > now then return {fmt(row.next_at), ''} end
row.expires = now + tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'holder', ARGV[1], 'expires', fmt(row.expires))
keep(KEYS[1], row, now)
return false
"""
)

# KEYS: the host's lease hash. ARGV: holder, now, ready_at, ask memory.
_RELEASE = (
    _READ
    + r"""
local now, ready = tonumber(ARGV[2]), tonumber(ARGV[3])
local asked = ready - now
if asked > 0 then
  local till = now + math.max(tonumber(ARGV[4]), 4 * asked)
  redis.call('HSET', KEYS[1], 'a:' .. ARGV[1], fmt(asked) .. ' ' .. fmt(till))
end
local row = load(KEYS[1], now, true)
if asked > 0 then row.next_at = math.max(row.next_at, now + row.gap) end
row.next_at = math.max(row.next_at, ready)
redis.call('HSET', KEYS[1], 'next_at', fmt(row.next_at))
if row.holder == ARGV[1] then
  redis.call('HDEL', KEYS[1], 'holder')
  redis.call('HSET', KEYS[1], 'expires', '0')
  row.expires = 0
end
keep(KEYS[1], row, now)
return false
"""
)

# KEYS: the host's lease hash. ARGV: now. Returns holder, expires, next_at, gap.
_GET = (
    _READ
    + r"""
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local row = load(KEYS[1], tonumber(ARGV[1]), false)
return {row.holder or '', fmt(row.expires), fmt(row.next_at), fmt(row.gap)}
"""
)


BEAT_TTL = 10.0  # seconds a holder counts as alive after its last beat


def holder_key(holder: str) -> str:
    return f"trawl:holder:{{{holder.replace('{', '%7B').replace('}', '%7D')}}}"


@contextlib.contextmanager
def _redis_errors() -> Iterator[None]:
    """Redis that stays away past the connection's retries: a ``StorageError``, which
    the fetch path's gate turns into a host that waits (never a crash of the crawl)."""
    try:
        yield
    except redis.RedisError as exc:
        raise StorageError(f"host leases in Redis: {exc}") from exc


class RedisHostLeases:
    def __init__(
        self, url: str, *, beat_ttl: float = BEAT_TTL, give_up: Callable[[], bool] = never
    ) -> None:
        self._conn = Conn(connect(url), give_up=give_up)
        self._beat_ttl = beat_ttl
        self._beaten: dict[str, float] = {}  # holder -> monotonic time of its last beat

    def acquire(
        self, host: str, *, holder: str, now: float, ttl: float, gap: float = 0.0
    ) -> float | None:
        with _redis_errors():
            if time.monotonic() - self._beaten.get(holder, -1e18) > self._beat_ttl / 4:
                self.beat(holder)
            key = [shared_host(host)]
            args = [holder, arg(now), arg(ttl), arg(MIN_POLL)]
            found = self._conn.script(_ACQUIRE, key, [*args, "", arg(gap)])
            if found is not None and text(found[1]):
                other = text(found[1]) or ""
                if not self._conn.call("EXISTS", holder_key(other)):  # it stopped beating
                    found = self._conn.script(_ACQUIRE, key, [*args, other, arg(gap)])
            return None if found is None else num(found[0])

    def beat(self, holder: str) -> None:
        with _redis_errors():
            ms = int(self._beat_ttl * 1000)
            self._conn.call("SET", holder_key(holder), "1", "PX", ms)
            self._beaten[holder] = time.monotonic()

    def release(self, host: str, *, holder: str, now: float, ready_at: float) -> None:
        with _redis_errors():
            args = [holder, arg(now), arg(ready_at), arg(ASK_MEMORY)]
            self._conn.script(_RELEASE, [shared_host(host)], args)

    def get(self, host: str, now: float) -> SharedHost | None:
        with _redis_errors():
            found = self._conn.script(_GET, [shared_host(host)], [arg(now)])
            if not found:
                return None
            holder, expires, next_at, gap = (text(v) or "" for v in found)
            live = holder if holder and float(expires) > now else None
            return SharedHost(host, live, float(expires), float(next_at), float(gap))

    def close(self) -> None:
        self._conn.close()
