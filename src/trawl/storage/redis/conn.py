"""The connection of a Redis crawl store: the client from a URL, scripts, round-trip counts.

``redis://host:port/db`` is one server, ``redis+cluster://host:port`` a Redis Cluster
(any node of it; the client finds the others). Both are redis-py's synchronous
clients: the store Protocols are synchronous. Every call goes through ``Conn`` so a
bench can report round trips (one per command sent alone, one per pipeline, per node
it touches in a cluster) and commands per page.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit

import redis
import redis.cluster
from redis.exceptions import (
    ClusterDownError,
    NoScriptError,
    RedisClusterException,
    TryAgainError,
)

from trawl.errors import StorageError

Client = redis.Redis | redis.cluster.RedisCluster
Arg = str | bytes | int | float

CLUSTER_SCHEME = "redis+cluster"
T = TypeVar("T")

# What a primary's failover (or a restart) looks like from a client: calls fail for a
# few seconds, then the cluster answers again with the replica promoted. The connection
# waits it out (``OUTAGE`` seconds at most) instead of failing the worker.
_TRANSIENT = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    ClusterDownError,
    TryAgainError,
    RedisClusterException,
)
OUTAGE = 30.0


def connect(url: str) -> Client:
    """The synchronous client for ``url`` (``redis://`` or ``redis+cluster://``)."""
    parts = urlsplit(url)
    if parts.scheme == CLUSTER_SCHEME:
        # Several nodes may be named (host:port,host:port): the client starts from any
        # that answers, so a URL outlives the failure of one of them.
        auth, _, hosts = parts.netloc.rpartition("@")
        first, *more = hosts.split(",")
        nodes = [redis.cluster.ClusterNode(*_host_port(h)) for h in more]  # type: ignore[no-untyped-call]
        return redis.cluster.RedisCluster.from_url(
            f"redis://{auth + '@' if auth else ''}{first}",
            require_full_coverage=True,
            startup_nodes=nodes or None,
        )
    if parts.scheme in ("redis", "rediss", "unix"):
        return redis.Redis.from_url(url)
    raise StorageError(f"not a Redis URL: {url!r} (redis://HOST:PORT/DB or redis+cluster://)")


def _host_port(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise StorageError(f"not HOST:PORT in a Redis Cluster URL: {text!r}")
    return host.strip("[]"), int(port)


class Conn:
    """A client with loaded scripts and counters of round trips and commands."""

    def __init__(self, client: Client, *, outage: float = OUTAGE) -> None:
        self.client = client
        self.cluster = isinstance(client, redis.cluster.RedisCluster)
        self.round_trips = 0
        self.commands = 0
        self.retries = 0
        self._outage = outage
        self._shas: dict[str, str] = {}

    def retrying(self, attempt: Callable[[], T]) -> T:
        """``attempt()``, again after a transient failure until ``outage`` has passed.

        A command sent again may run twice (its answer, not the command, was lost):
        every write of the store is safe to repeat but the counters' increments, which
        may count once more (docs/redis.md).
        """
        deadline = time.monotonic() + self._outage
        pause = 0.05
        while True:
            try:
                return attempt()
            except _TRANSIENT:
                if time.monotonic() + pause > deadline:
                    raise
                self.retries += 1
                time.sleep(pause)
                pause = min(pause * 2, 1.0)
                self._shas.clear()  # a promoted replica has no scripts loaded

    def call(self, *args: Arg) -> Any:
        self.round_trips += 1
        self.commands += 1
        return self.retrying(lambda: self.client.execute_command(*args))  # type: ignore[no-untyped-call]

    def wait_replicas(self, replicas: int, timeout_ms: int) -> int:
        """``WAIT`` on every primary: the fewest replicas that acknowledged our writes."""
        self.commands += 1
        if isinstance(self.client, redis.cluster.RedisCluster):
            self.round_trips += len(self.client.get_primaries())  # type: ignore[no-untyped-call]
            answers = self.client.execute_command(  # type: ignore[no-untyped-call]
                "WAIT", replicas, timeout_ms, target_nodes=redis.cluster.RedisCluster.PRIMARIES
            )
            values = answers.values() if isinstance(answers, dict) else [answers]
            return min(int(v) for v in values)
        self.round_trips += 1
        return int(self.client.execute_command("WAIT", replicas, timeout_ms))  # type: ignore[no-untyped-call]

    def counted(self) -> Client:
        """The client, for one command of its own API (counted as one round trip)."""
        self.round_trips += 1
        self.commands += 1
        return self.client

    def nodes_of(self, keys: list[str]) -> int:
        """How many nodes a pipeline of commands on ``keys`` goes to (cluster)."""
        assert isinstance(self.client, redis.cluster.RedisCluster)
        get = self.client.get_node_from_key
        return len({get(k).name for k in {_slot_tag(k) for k in keys}})  # type: ignore[no-untyped-call]

    def pipeline(self) -> Pipe:
        return Pipe(self)

    def _sha(self, script: str) -> str:
        sha = self._shas.get(script)
        if sha is None:
            sha = self._shas[script] = str(self.client.script_load(script))
        return sha

    def script(self, script: str, keys: Sequence[str], args: Sequence[Arg]) -> Any:
        """Run a Lua script (by its SHA; loaded again if the server forgot it)."""
        self.round_trips += 1
        self.commands += 1

        def attempt() -> Any:
            try:
                return self.client.evalsha(self._sha(script), len(keys), *keys, *args)
            except NoScriptError:  # a failed-over replica or a restarted server
                self._shas.clear()
                return self.client.evalsha(self._sha(script), len(keys), *keys, *args)

        return self.retrying(attempt)

    def close(self) -> None:
        """Close every socket now (a cluster client's ``close`` leaves its nodes' pools)."""
        if isinstance(self.client, redis.cluster.RedisCluster):
            for node in self.client.get_nodes():  # type: ignore[no-untyped-call]
                if node.redis_connection is not None:
                    node.redis_connection.connection_pool.disconnect()
        else:
            self.client.connection_pool.disconnect()
        self.client.close()


class Pipe:
    """Commands sent together: one round trip (per node in a cluster)."""

    def __init__(self, conn: Conn) -> None:
        self._conn = conn
        self._pipe = conn.client.pipeline(transaction=False)
        self._keys: list[str] = []
        self._scripts: list[tuple[str, Sequence[str], Sequence[Arg]] | None] = []
        self._ops: list[tuple[Arg, ...]] = []  # to send again after a failover

    def __len__(self) -> int:
        return len(self._keys)

    def call(self, *args: Arg) -> None:
        self._keys.append(str(args[1]) if len(args) > 1 else "")
        self._scripts.append(None)
        self._ops.append(args)
        self._pipe.execute_command(*args)

    def script(self, script: str, keys: Sequence[str], args: Sequence[Arg]) -> None:
        self._keys.append(keys[0] if keys else "")
        self._scripts.append((script, keys, args))
        self._ops.append(())  # a script: its SHA is looked up again when sent again
        self._pipe.execute_command("EVALSHA", self._conn._sha(script), len(keys), *keys, *args)

    def execute(self) -> list[Any]:
        """Every command's answer; a script the server forgot is loaded and run again.

        A failed-over replica or a restarted server has an empty script cache (Redis 7
        does not replicate it). The pipeline's other commands ran, so only the scripts
        that answered NOSCRIPT (which did nothing) are sent again.
        """
        if not self._keys:
            return []
        conn = self._conn
        conn.commands += len(self._keys)
        conn.round_trips += conn.nodes_of(self._keys) if conn.cluster else 1
        scripts, ops = self._scripts, self._ops
        first = [True]

        def attempt() -> list[Any]:
            if not first[0]:  # the pipeline is spent: build it again, scripts by SHA
                self._pipe = conn.client.pipeline(transaction=False)
                for op, sc in zip(ops, scripts, strict=True):
                    if sc is None:
                        self._pipe.execute_command(*op)
                    else:
                        script, keys, args = sc
                        sha = conn._sha(script)
                        self._pipe.execute_command("EVALSHA", sha, len(keys), *keys, *args)
            first[0] = False
            out = list(self._pipe.execute(raise_on_error=False))
            for answer in out:
                if isinstance(answer, _TRANSIENT):
                    raise answer  # send the whole pipeline again
            return out

        try:
            answers = conn.retrying(attempt)
        finally:
            self._keys, self._scripts, self._ops = [], [], []
            self._pipe = conn.client.pipeline(transaction=False)
        for i, answer in enumerate(answers):
            if isinstance(answer, NoScriptError) and scripts[i] is not None:
                conn._shas.clear()
                script, keys, args = scripts[i]  # type: ignore[misc]
                answers[i] = conn.script(script, keys, args)
            elif isinstance(answer, Exception):
                raise answer
        return answers


def _slot_tag(key: str) -> str:
    """A key of the same slot as ``key`` (its hash tag in braces, or itself)."""
    start = key.find("{")
    end = key.find("}", start + 1)
    return key[start : end + 1] if start >= 0 and end > start + 1 else key
