"""The parse queue as a Redis Stream read through one consumer group, ``parse``.

``put`` takes its sequence number from a block of ``SEQ_BLOCK`` numbers this worker
took from a counter (``INCRBY``: numbers only grow, across every worker, and a
block's numbers left unused when a worker ends are never used) and keeps the job
here; the commit appends it to the stream and, in the same script, delivers it to
the putting worker (its consumer's pending list): the worker parses what it fetched.
Appending is done once per number (the ``ids`` hash maps a number to its entry), so a
commit sent twice adds nothing.
``ack`` waits for the commit too and is sent after its outputs (``XACK`` + ``XDEL``),
so an entry leaves only once what its parse produced is stored.

``pending`` is this worker's pending entries (after a restart: what it had not
parsed), plus entries of other consumers idle longer than ``claim_idle`` seconds
(``XAUTOCLAIM``: a dead worker's pages go to the living), plus its own new ones.
Entries that became this worker's after it polled past their numbers (taken over
from a dead worker, claimed idle) are handed out once whatever ``after`` says.
``taken_over`` hands out only those: a worker that fetches and parses takes up its
own pages as it fetches them and never polls ``pending``, so without it a dead
worker's adopted pages would wait in its pending list for ever (found by the kill
drill: the crawl never ended).
"""

from __future__ import annotations

from typing import Any

from trawl.jobs import ParseJob
from trawl.storage.redis.conn import Conn, Pipe
from trawl.storage.redis.keys import Keys, text

GROUP = "parse"

# KEYS stream, ids; ARGV seq, job, consumer. Scripts run one at a time, and each
# delivers what it appends, so the next undelivered entry is the one just appended.
PUT = r"""
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 0 end
local id = redis.call('XADD', KEYS[1], '*', 'seq', ARGV[1], 'job', ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], id)
for _ = 1, 100 do
  local got = redis.call('XREADGROUP', 'GROUP', 'parse', ARGV[3], 'COUNT', 1,
    'STREAMS', KEYS[1], '>')
  if not got or #got[1][2] == 0 or got[1][2][1][1] == id then break end
end
return 1
"""

# KEYS stream, ids; ARGV seqs.
ACK = r"""
for i = 1, #ARGV do
  local id = redis.call('HGET', KEYS[2], ARGV[i])
  if id then
    redis.call('XACK', KEYS[1], 'parse', id)
    redis.call('XDEL', KEYS[1], id)
    redis.call('HDEL', KEYS[2], ARGV[i])
  end
end
return 0
"""

_CHUNK = 1000
SEQ_BLOCK = 64  # sequence numbers taken from the counter at a time


def _fields(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return {text(k) or "": v for k, v in raw.items()}
    return {text(k) or "": v for k, v in zip(raw[::2], raw[1::2], strict=True)}


def _jobs(rows: Any) -> list[tuple[int, bytes]]:
    """``(seq, job)`` of stream entries (deleted ones, without fields, left out)."""
    out = []
    for row in rows or ():
        if row and len(row) > 1 and row[1]:
            f = _fields(row[1])
            out.append((int(text(f["seq"]) or 0), f["job"]))
    return out


def create_group(conn: Conn, keys: Keys) -> None:
    """The consumer group (and the stream), if not there yet."""
    try:
        conn.call("XGROUP", "CREATE", keys.stream, GROUP, "0", "MKSTREAM")
    except Exception as e:  # redis-py raises ResponseError; only BUSYGROUP is expected
        if "BUSYGROUP" not in str(e):
            raise


def backlog(conn: Conn, keys: Keys) -> int:
    return int(conn.call("XLEN", keys.stream))


class RedisParseQueue:
    """The ParseQueue protocol: committed entries in the stream, new ones buffered here."""

    def __init__(self, conn: Conn, keys: Keys, consumer: str, *, claim_idle: float = 600.0) -> None:
        self._conn = conn
        self._keys = keys
        self._consumer = consumer
        self._claim_idle_ms = int(claim_idle * 1000)
        self._next_seq = self._end_seq = 0  # the block of sequence numbers in hand
        create_group(conn, keys)
        self.drop()

    def _mine(self) -> list[tuple[int, bytes]]:
        """Entries delivered to this consumer and not acked, and idle ones claimed."""
        out: list[tuple[int, bytes]] = []
        start = "0"
        while True:
            got = self._conn.call(
                "XREADGROUP", "GROUP", GROUP, self._consumer, "COUNT", _CHUNK,
                "STREAMS", self._keys.stream, start,
            )  # fmt: skip
            rows = got[0][1] if got else []
            out += _jobs(rows)
            if len(rows) < _CHUNK:
                break
            start = text(rows[-1][0]) or "0"
        out += self._claim_idle()
        out.sort(key=lambda e: e[0])
        return out

    def _claim_idle(self) -> list[tuple[int, bytes]]:
        """Other consumers' entries idle past ``claim_idle``, now this consumer's."""
        out: list[tuple[int, bytes]] = []
        cursor = "0-0"
        while True:
            answer = self._conn.call(
                "XAUTOCLAIM", self._keys.stream, GROUP, self._consumer,
                self._claim_idle_ms, cursor, "COUNT", _CHUNK,
            )  # fmt: skip
            claimed = _jobs(answer[1])
            self._late.update(claimed)
            out += claimed
            cursor = text(answer[0]) or "0-0"
            if cursor == "0-0":
                return out

    def drop(self) -> None:
        self._puts: dict[int, ParseJob] = {}
        self._acks: set[int] = set()
        # Seqs that became this consumer's after it may have polled past them (taken
        # over from a dead worker, claimed idle): handed out once whatever ``after``.
        self._late: dict[int, bytes] = {}

    def adopt(self, consumer: str) -> int:
        """Take over the pending entries of ``consumer`` (a dead worker); how many."""
        taken = 0
        while True:
            rows = self._conn.counted().xpending_range(
                self._keys.stream, GROUP, "-", "+", _CHUNK, consumername=consumer
            )
            ids: list[Any] = [text(r["message_id"]) or "" for r in rows]
            if ids:
                got = self._conn.counted().xclaim(self._keys.stream, GROUP, self._consumer, 0, ids)
                self._late.update(_jobs(got))
                taken += len(ids)
            if len(ids) < _CHUNK:
                break
        self._conn.call("XGROUP", "DELCONSUMER", self._keys.stream, GROUP, consumer)
        return taken

    def put(self, job: ParseJob) -> int:
        if self._next_seq >= self._end_seq:
            self._end_seq = int(self._conn.call("INCRBY", self._keys.stream_seq, SEQ_BLOCK)) + 1
            self._next_seq = self._end_seq - SEQ_BLOCK
        seq = self._next_seq
        self._next_seq += 1
        self._puts[seq] = job
        return seq

    def pending(self, *, after: int = 0, limit: int = 1000) -> list[tuple[int, ParseJob]]:
        out: list[tuple[int, ParseJob]] = []
        for seq, job in self._mine():
            if len(out) >= limit:
                return out
            if (seq > after or seq in self._late) and seq not in self._acks:
                self._late.pop(seq, None)
                out.append((seq, ParseJob.load(job)))
        for seq, parse_job in self._puts.items():
            if len(out) >= limit:
                break
            if seq > after:
                out.append((seq, parse_job))
        return out

    def taken_over(self, *, limit: int = 1000) -> list[tuple[int, ParseJob]]:
        """Adopted entries (``adopt``) and others' idle ones (claimed here), once each:
        one round trip, so a worker that fetches and parses can ask every second."""
        self._claim_idle()
        out: list[tuple[int, ParseJob]] = []
        for seq in sorted(self._late):
            if len(out) >= limit:
                break
            job = self._late.pop(seq)
            if seq not in self._acks:
                out.append((seq, ParseJob.load(job)))
        return out

    def ack(self, seq: int) -> None:
        if self._puts.pop(seq, None) is None:
            self._acks.add(seq)

    def __len__(self) -> int:
        committed = backlog(self._conn, self._keys)
        if self._acks:
            ids = self._conn.call("HMGET", self._keys.stream_ids, *sorted(self._acks))
            committed -= sum(1 for i in ids if i is not None)
        return committed + len(self._puts)

    @property
    def has_writes(self) -> bool:
        """Entries or acknowledgements waiting for the commit."""
        return bool(self._puts or self._acks)

    def flush_puts(self, pipe: Pipe) -> None:
        for seq, job in self._puts.items():
            keys = [self._keys.stream, self._keys.stream_ids]
            pipe.script(PUT, keys, [str(seq), job.dump().decode(), self._consumer])
        self._puts = {}

    def flush_acks(self, pipe: Pipe) -> None:
        if self._acks:
            pipe.script(
                ACK,
                [self._keys.stream, self._keys.stream_ids],
                [str(s) for s in sorted(self._acks)],
            )
        self._acks = set()
