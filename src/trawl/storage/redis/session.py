"""A worker's session of a Redis crawl: its name held, its heartbeat, its fencing.

The name is held by ``P {<crawl>/g}:owner:<worker>`` (``SET NX`` with an expiry and a
random token), the heartbeat is the worker's deadline in ``P {<crawl>/g}:sessions``.
Both are renewed at each commit; a session whose deadline passed is dead, and the
first living worker whose sweep removes it from ``sessions`` (``ZREM`` answers 1 to one
caller only) rolls it back. A worker that was only slow (a pause, a failover longer
than the session's life) finds its session gone at its next commit or lease and is
refused (``SessionLostError``) before it writes anything: its work went to the others.

A commit begins with one script on the ``{<crawl>/g}`` keys (``BEGIN``): the session
still ours? then the blob logs' committed ends and the other meta, and the heartbeat.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from trawl.errors import DataDirInUseError, SessionLostError
from trawl.storage.redis.conn import Conn
from trawl.storage.redis.keys import Keys, text

# KEYS sessions, owner, meta; ARGV worker, token, deadline, ttl ms, then meta field,
# value pairs. 0 (and nothing written) when the session is not ours any more.
BEGIN = r"""
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('GET', KEYS[2]) ~= ARGV[2] then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
for i = 5, #ARGV, 2 do redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1]) end
return 1
"""


class Session:
    """One worker's session (see the module docstring)."""

    def __init__(
        self,
        conn: Conn,
        keys: Keys,
        worker: str,
        token: str,
        *,
        ttl: float,
        wall: Callable[[], float],
    ) -> None:
        self._conn = conn
        self._keys = keys
        self.worker = worker
        self._token = token
        self.ttl = ttl
        self._wall = wall
        self._owner = keys.owner(worker)
        self._swept_at = -math.inf  # when dead sessions were last looked for
        if not conn.call("SET", self._owner, token, "NX", "PX", self._ttl_ms):
            raise DataDirInUseError(f"worker {worker} of crawl {keys.crawl} is open elsewhere")
        self.beat()

    @property
    def _ttl_ms(self) -> int:
        return int(self.ttl * 1000)

    def _lost(self) -> SessionLostError:
        return SessionLostError(
            f"worker {self.worker} was silent for more than {self.ttl:g} s and its "
            "session was given to the others; nothing since its last commit is kept"
        )

    def beat(self) -> None:
        """Tell the other workers this session lives (and keep its name ours)."""
        pipe = self._conn.pipeline()
        pipe.call("ZADD", self._keys.sessions, repr(self._wall() + self.ttl), self.worker)
        pipe.call("PEXPIRE", self._owner, self._ttl_ms)
        pipe.execute()
        self._beat_at = self._wall()

    def fresh(self) -> bool:
        """The heartbeat is recent: a commit with nothing to write may be skipped."""
        return self._wall() - self._beat_at < self.ttl / 4

    def check(self) -> None:
        """Refuse to go on for a session another worker rolled back (SessionLostError)."""
        pipe = self._conn.pipeline()
        pipe.call("ZSCORE", self._keys.sessions, self.worker)
        pipe.call("GET", self._owner)
        score, owner = pipe.execute()
        if score is None or owner != self._token.encode():
            raise self._lost()

    def alive(self) -> None:
        """Before a new lease after a long silence (a pause, a stop), make sure the
        session still lives: a rolled-back worker must not fetch a host the others
        have taken over."""
        if self._wall() - self._beat_at > self.ttl / 2:
            self.check()
            self.beat()

    def begin_commit(self, meta: Mapping[str, str]) -> None:
        """Still ours? Then write ``meta`` (the logs' ends first of all) and beat, in one
        step; else SessionLostError with nothing written."""
        wall = self._wall()
        args = [self.worker, self._token, repr(wall + self.ttl), str(self._ttl_ms)]
        args += [x for kv in meta.items() for x in kv]
        keys = [self._keys.sessions, self._owner, self._keys.meta]
        if not self._conn.script(BEGIN, keys, args):
            raise self._lost()
        self._beat_at = wall

    def dead(self) -> list[str]:
        """The sessions whose heartbeat stopped that this worker took off the registry
        (each is this worker's to roll back); looked for every tenth of a session's life."""
        wall = self._wall()
        if wall - self._swept_at < max(1.0, self.ttl / 10):
            return []
        self._swept_at = wall
        found = self._conn.call("ZRANGEBYSCORE", self._keys.sessions, "-inf", repr(wall))
        names = [text(d) or "" for d in found]
        return [
            name
            for name in names
            if name != self.worker and self._conn.call("ZREM", self._keys.sessions, name)
        ]

    def close(self) -> None:
        """Give the name back (if it is still ours)."""
        if self._conn.call("GET", self._owner) == self._token.encode():
            self._conn.call("DEL", self._owner)
