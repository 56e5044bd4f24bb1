"""The connection of a Redis crawl store: the client from a URL, scripts, round-trip counts.

``redis://host:port/db`` is one server, ``redis+cluster://host:port`` a Redis Cluster
(any node of it; the client finds the others). Both are redis-py's synchronous
clients: the store Protocols are synchronous. Every call goes through ``Conn`` so a
bench can report round trips (one per command sent alone, one per pipeline, per node
it touches in a cluster) and commands per page.

Writes whose answers nobody waits for (index upkeep, count moves, wake-ups) are kept
back (``later``, ``tally``) and sent ahead of the commands of the next round trip,
whatever it is, so they cost no round trip of their own; ``flush`` sends them alone
(before a worker waits, at a commit). A crash loses them as it would lose a pipeline
not yet sent: every one is an index hint that is early, never late, or a statistic.
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
from trawl.storage.retry import again_until, never

Client = redis.Redis | redis.cluster.RedisCluster
Arg = str | bytes | int | float
Script = tuple[str, Sequence[str], Sequence[Arg]]  # source, keys, args
# A write kept back: a command (or () and a script), and who hears its answer.
Later = tuple[tuple[Arg, ...], Script | None, Callable[[Any], None] | None]

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


def _transient(exc: Exception) -> bool:
    return isinstance(exc, _TRANSIENT)


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

    def __init__(
        self,
        client: Client,
        *,
        outage: float = OUTAGE,
        give_up: Callable[[], bool] = never,
    ) -> None:
        """``give_up``: asked between attempts; True ends the wait for Redis at once (a
        worker told twice to stop: an outage must not keep it from exiting)."""
        self.client = client
        self.cluster = isinstance(client, redis.cluster.RedisCluster)
        self.round_trips = 0
        self.commands = 0
        self.retries = 0
        self.outage = outage
        self._give_up = give_up
        self._shas: dict[str, str] = {}
        self._later: list[Later] = []  # writes sent ahead of the next round trip
        self._tally: dict[tuple[str, str], int] = {}  # (hash, field) -> increment, likewise

    # -- writes kept back ---------------------------------------------------------------

    def later(self, *args: Arg) -> None:
        """Send this write ahead of the next round trip."""
        self._later.append((args, None, None))

    def later_script(self, script: Script, *, answer: Callable[[Any], None] | None) -> None:
        """Run this script ahead of the next round trip (``answer`` hears its reply)."""
        self._later.append(((), script, answer))

    def tally(self, key: str, field: str, n: int) -> None:
        """Add ``n`` to ``field`` of hash ``key`` with the next round trip (summed here)."""
        self._tally[(key, field)] = self._tally.get((key, field), 0) + n

    @property
    def pending(self) -> bool:
        return bool(self._later) or any(self._tally.values())

    def take_pending(self) -> list[Later]:
        """The kept-back writes in order (counts first: they commute); now empty."""
        ops: list[Later] = [(("HINCRBY", *kf, n), None, None) for kf, n in self._tally.items() if n]
        ops, self._later, self._tally = ops + self._later, [], {}
        return ops

    def flush(self) -> None:
        """Send the kept-back writes now (one round trip, none if there are none)."""
        if self.pending:
            self.pipeline().execute()

    def drop_pending(self) -> None:
        """Forget the kept-back writes (a store closed as a crash leaves it)."""
        self._later, self._tally = [], {}

    def retrying(self, attempt: Callable[[], T]) -> T:
        """``attempt()``, again after a transient failure until ``outage`` has passed.

        A command sent again may run twice (its answer, not the command, was lost):
        every write of the store is safe to repeat but the counters' increments, which
        may count once more (docs/redis.md).
        """
        return again_until(
            attempt,
            _transient,
            self.outage,
            0.05,
            1.0,
            give_up=self._give_up,
            retried=self._retried,
        )

    def _retried(self) -> None:
        self.retries += 1
        self._shas.clear()  # a promoted replica has no scripts loaded

    def call(self, *args: Arg) -> Any:
        if self.pending:  # one round trip with the writes kept back
            pipe = self.pipeline()
            pipe.call(*args)
            return pipe.execute()[0]
        self.round_trips += 1
        self.commands += 1
        return self.retrying(lambda: self.client.execute_command(*args))  # type: ignore[no-untyped-call]

    def wait_replicas(self, replicas: int, timeout_ms: int) -> int:
        """``WAIT`` on every primary until each has ``replicas`` replicas holding our
        writes, or ``outage`` has passed (a failover leaves the promoted replica without
        one until a node joins it); the fewest that acknowledged.

        Each primary is asked on its own: redis-py sums a ``WAIT`` sent to several
        nodes, and a sum hides a primary (a promoted replica) that has none.
        """
        self.flush()
        client = self.client

        def fewest() -> int:
            self.commands += 1
            if isinstance(client, redis.cluster.RedisCluster):
                primaries = client.get_primaries()  # type: ignore[no-untyped-call]
                self.round_trips += len(primaries)
                return min(
                    int(client.execute_command("WAIT", replicas, timeout_ms, target_nodes=node))  # type: ignore[no-untyped-call]
                    for node in primaries
                )
            self.round_trips += 1
            return int(client.execute_command("WAIT", replicas, timeout_ms))  # type: ignore[no-untyped-call]

        deadline = time.monotonic() + self.outage
        while (
            (got := self.retrying(fewest)) < replicas
            and time.monotonic() < deadline
            and not self._give_up()
        ):
            self.retries += 1
            time.sleep(min(0.2, timeout_ms / 1000))  # no replica at all: WAIT answers at once
        return got

    def counted(self) -> Client:
        """The client, for one command of its own API (counted as one round trip)."""
        self.flush()
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

    def sha(self, script: str) -> str:
        sha = self._shas.get(script)
        if sha is None:
            sha = self._shas[script] = str(self.client.script_load(script))
        return sha

    def script(self, script: str, keys: Sequence[str], args: Sequence[Arg]) -> Any:
        """Run a Lua script (by its SHA; loaded again if the server forgot it)."""
        if self.pending:  # one round trip with the writes kept back
            pipe = self.pipeline()
            pipe.script(script, keys, args)
            return pipe.execute()[0]
        self.round_trips += 1
        self.commands += 1

        def attempt() -> Any:
            try:
                return self.client.evalsha(self.sha(script), len(keys), *keys, *args)
            except NoScriptError:  # a failed-over replica or a restarted server
                self._shas.clear()
                return self.client.evalsha(self.sha(script), len(keys), *keys, *args)

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
    """Commands sent together, after the connection's kept-back writes: one round trip
    (per node in a cluster)."""

    def __init__(self, conn: Conn) -> None:
        self._conn = conn
        self._ops: list[tuple[Arg, ...]] = []  # plain commands; () for a script
        self._scripts: list[Script | None] = []

    def __len__(self) -> int:
        return len(self._ops)

    def call(self, *args: Arg) -> None:
        self._ops.append(args)
        self._scripts.append(None)

    def script(self, script: str, keys: Sequence[str], args: Sequence[Arg]) -> None:
        self._ops.append(())  # its SHA is looked up when sent (again after a failover)
        self._scripts.append((script, keys, args))

    def execute(self) -> list[Any]:
        """Every command's answer; a script the server forgot is loaded and run again.

        A failed-over replica or a restarted server has an empty script cache (Redis 7
        does not replicate it). The pipeline's other commands ran, so only the scripts
        that answered NOSCRIPT (which did nothing) are sent again.
        """
        conn = self._conn
        early = conn.take_pending()
        ops = [op for op, _sc, _a in early] + self._ops
        scripts = [sc for _op, sc, _a in early] + self._scripts
        listeners = [a for _op, _sc, a in early]
        self._ops, self._scripts = [], []
        if not ops:
            return []
        conn.commands += len(ops)
        if conn.cluster:
            keys = [str(sc[1][0]) if sc is not None and sc[1] else _key(op) for op, sc in
                    zip(ops, scripts, strict=True)]  # fmt: skip
            conn.round_trips += conn.nodes_of(keys)
        else:
            conn.round_trips += 1

        def attempt() -> list[Any]:
            pipe = conn.client.pipeline(transaction=False)
            for op, sc in zip(ops, scripts, strict=True):
                if sc is None:
                    pipe.execute_command(*op)
                else:
                    script, keys, args = sc
                    pipe.execute_command("EVALSHA", conn.sha(script), len(keys), *keys, *args)
            out = list(pipe.execute(raise_on_error=False))
            for answer in out:
                if isinstance(answer, _TRANSIENT):
                    raise answer  # send the whole pipeline again
            return out

        answers = conn.retrying(attempt)
        for i, answer in enumerate(answers):
            sc = scripts[i]
            if isinstance(answer, NoScriptError) and sc is not None:
                conn._shas.clear()
                answers[i] = answer = conn.script(*sc)
            elif isinstance(answer, Exception):
                raise answer
            if i < len(listeners) and (listen := listeners[i]) is not None:
                listen(answer)
        return answers[len(early) :]


def _key(op: tuple[Arg, ...]) -> str:
    return str(op[1]) if len(op) > 1 else ""


def _slot_tag(key: str) -> str:
    """A key of the same slot as ``key`` (its hash tag in braces, or itself)."""
    start = key.find("{")
    end = key.find("}", start + 1)
    return key[start : end + 1] if start >= 0 and end > start + 1 else key
