"""How idle workers of a Redis crawl wait for work without polling the schedule.

A worker with nothing to do blocks (``BLPOP``, in a thread of its own, on a connection
of its own to the node that holds the key) on the crawl's wake list ``P {<crawl>/g}:wake``.
A worker that has work it cannot take (it is at its concurrency, paused, at its page
limit) puts a token there (``announce``: script ``WAKE_ONE``, sent with its next round
trip): one idle worker wakes, looks at the schedule and takes what is due; if it fills
up in turn it announces again. A token nobody was waiting for stays (one at most), so
the next worker to become idle looks at once, and the announcer backs off for a while.

Waits are bounded by the caller (the earliest due time the last look at the buckets
saw, or a few seconds), so a lost token costs a short delay, never work: the host's
own script still decides whether it may be fetched.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

import redis
import redis.cluster

from trawl.storage.redis.conn import Conn
from trawl.storage.redis.keys import Keys

# Wake one idle worker: a token on the crawl's wake list, unless ARGV[1] are there
# already (nobody is waiting for them). KEYS wake. Returns the tokens there before.
WAKE_ONE = r"""
local n = redis.call('LLEN', KEYS[1])
if n < tonumber(ARGV[1]) then redis.call('LPUSH', KEYS[1], ARGV[2]) end
return n
"""

_TOKENS = 1  # tokens left on the list at most
_BACKOFF = 1.0  # seconds between announcements while nobody takes the tokens
_RETRY = 0.5  # seconds without blocking after the wake connection failed


class RedisWakeSignal:
    """The wake list of one crawl, for one worker (its own blocking connection)."""

    def __init__(self, conn: Conn, keys: Keys, *, token: str = "") -> None:
        self._conn = conn
        self._key = keys.wake
        self._token = token or "1"
        self._quiet_until = 0.0  # monotonic: no announcement before (nobody waits)
        self._lock = threading.Lock()
        self._client: redis.Redis | None = None  # the blocking connection
        self._client_id = 0  # its CLIENT ID
        self._blocked_id: int | None = None  # that, while a BLPOP is under way
        self._closed = False
        self._stop = threading.Event()

    # -- the worker that has work to spare ---------------------------------------------

    def announce(self) -> None:
        """Work is ready here that this worker cannot take: wake one idle worker (sent
        with the next round trip; quiet for a while when nobody took the last token)."""
        if time.monotonic() < self._quiet_until:
            return
        self._quiet_until = time.monotonic() + 0.05  # one per burst of loop turns

        def heard(before: Any) -> None:
            if int(before or 0) >= _TOKENS:
                self._quiet_until = time.monotonic() + _BACKOFF

        self._conn.later_script((WAKE_ONE, [self._key], [str(_TOKENS), self._token]), answer=heard)

    def flush(self) -> None:
        """Send the writes kept back (before this worker goes quiet)."""
        self._conn.flush()

    # -- the idle worker ------------------------------------------------------------

    def block(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a token (run in a thread). True if one came."""
        if self._closed or timeout <= 0:
            return False
        try:
            client = self._connect()
            with self._lock:
                if self._closed:
                    return False
                self._blocked_id = self._client_id
            got = client.blpop([self._key], timeout=max(timeout, 0.01))
            return got is not None
        except redis.RedisError:
            # A failover, a moved slot, an unblock: connect again next time; meanwhile
            # wait without Redis (interruptible) rather than spin.
            self._drop()
            self._stop.wait(min(timeout, _RETRY))
            return False
        finally:
            with self._lock:
                self._blocked_id = None

    def unblock(self) -> None:
        """End a ``block`` under way at once (from another thread: the event loop's)."""
        with self._lock:
            blocked = self._blocked_id
        if blocked is None:
            return
        try:
            # Through the main connection (the blocked one is busy), to the node of
            # the wake key: the BLPOP answers nil now.
            client = self._conn.counted()
            if isinstance(client, redis.cluster.RedisCluster):
                node = client.get_node_from_key(self._key)  # type: ignore[no-untyped-call]
                client.execute_command("CLIENT", "UNBLOCK", blocked, target_nodes=node)  # type: ignore[no-untyped-call]
            else:
                client.execute_command("CLIENT", "UNBLOCK", blocked)  # type: ignore[no-untyped-call]
        except redis.RedisError:
            self._drop()  # its socket closed: the BLPOP ends with an error

    def close(self) -> None:
        self._closed = True
        self._stop.set()
        self.unblock()
        self._drop()

    # -- the blocking connection ---------------------------------------------------------

    def _node_pool(self) -> redis.ConnectionPool:
        """A pool of one's own to the node that holds the wake key (the server itself
        when standalone), with no read timeout: a BLPOP may block for seconds."""
        client = self._conn.client
        if isinstance(client, redis.cluster.RedisCluster):
            node = client.get_node_from_key(self._key)  # type: ignore[no-untyped-call]
            pool = node.redis_connection.connection_pool
        else:
            pool = client.connection_pool
        kwargs = {**pool.connection_kwargs, "socket_timeout": None}
        return redis.ConnectionPool(connection_class=pool.connection_class, **kwargs)

    def _connect(self) -> redis.Redis:
        with self._lock:
            client = self._client
        if client is None:
            client = redis.Redis.from_pool(self._node_pool())  # closing it closes the pool
            client_id = int(client.client_id())
            with self._lock:
                self._client, self._client_id = client, client_id
        return client

    def _drop(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(redis.RedisError):
                client.close()
