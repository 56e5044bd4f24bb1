"""The connection of a Redis crawl store: the client from a URL, scripts, round-trip counts.

``redis://host:port/db`` is one server, ``redis+cluster://host:port`` a Redis Cluster
(any node of it; the client finds the others). Both are redis-py's synchronous
clients: the store Protocols are synchronous. Every call goes through ``Conn`` so a
bench can report round trips (one per command sent alone, one per pipeline, per node
it touches in a cluster) and commands per page.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import redis
import redis.cluster
from redis.exceptions import NoScriptError

from trawl.errors import StorageError

Client = redis.Redis | redis.cluster.RedisCluster
Arg = str | bytes | int | float

CLUSTER_SCHEME = "redis+cluster"


def connect(url: str) -> Client:
    """The synchronous client for ``url`` (``redis://`` or ``redis+cluster://``)."""
    parts = urlsplit(url)
    if parts.scheme == CLUSTER_SCHEME:
        return redis.cluster.RedisCluster.from_url(
            "redis://" + parts.netloc, require_full_coverage=True
        )
    if parts.scheme in ("redis", "rediss", "unix"):
        return redis.Redis.from_url(url)
    raise StorageError(f"not a Redis URL: {url!r} (redis://HOST:PORT/DB or redis+cluster://)")


class Conn:
    """A client with loaded scripts and counters of round trips and commands."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.cluster = isinstance(client, redis.cluster.RedisCluster)
        self.round_trips = 0
        self.commands = 0
        self._shas: dict[str, str] = {}

    def call(self, *args: Arg) -> Any:
        self.round_trips += 1
        self.commands += 1
        return self.client.execute_command(*args)  # type: ignore[no-untyped-call]

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
        try:
            return self.client.evalsha(self._sha(script), len(keys), *keys, *args)
        except NoScriptError:  # a failed-over replica or a restarted server
            self._shas.clear()
            return self.client.evalsha(self._sha(script), len(keys), *keys, *args)

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

    def __len__(self) -> int:
        return len(self._keys)

    def call(self, *args: Arg) -> None:
        self._keys.append(str(args[1]) if len(args) > 1 else "")
        self._scripts.append(None)
        self._pipe.execute_command(*args)

    def script(self, script: str, keys: Sequence[str], args: Sequence[Arg]) -> None:
        self._keys.append(keys[0] if keys else "")
        self._scripts.append((script, keys, args))
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
        scripts = self._scripts
        try:
            answers = list(self._pipe.execute(raise_on_error=False))
        finally:
            self._keys, self._scripts = [], []
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
