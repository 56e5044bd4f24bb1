"""The Redis near index's layout on a real redis-server: small band buckets in Redis's
compact encoding, long lists of founders kept apart, a crash's claims given back
from both, and an index of the layout before buckets banded again when opened."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np
import pytest

from tests.redis_servers import RedisServer
from trawl.dedup.minhash import MinHasher
from trawl.storage.redis import near
from trawl.storage.redis.store import RedisCrawlStore

HASHER = MinHasher()


Values = np.ndarray[Any, np.dtype[np.uint32]]


def _random(rng: np.random.Generator) -> Values:
    return rng.integers(0, 2**32, HASHER.perms, dtype=np.uint32)


def _sig(values: Values) -> bytes:
    return values.astype("<u4").tobytes()


def _sharing(base: Values, bands: int, rng: np.random.Generator) -> bytes:
    """A signature that shares its first ``bands`` bands with ``base`` and no more
    (similarity bands / 32: under the threshold, so a founder of its own)."""
    v = _random(rng)
    rows = HASHER.rows
    v[: bands * rows] = base[: bands * rows]
    return _sig(v)


def _keys(store: RedisCrawlStore, pattern: str) -> list[str]:
    cursor: Any = 0
    found: list[str] = []
    while True:
        cursor, keys = store.conn.call("SCAN", cursor, "MATCH", pattern, "COUNT", 1000)
        found += [k.decode() for k in keys]
        if int(cursor) == 0:
            return found


def _store(server: RedisServer, crawl: str, worker: str = "w") -> RedisCrawlStore:
    return RedisCrawlStore(server.url, crawl, worker=worker)


def test_bands_stay_in_small_compact_buckets(redis_server: RedisServer) -> None:
    crawl = uuid.uuid4().hex[:12]
    store = _store(redis_server, crawl)
    rng = np.random.default_rng(1)
    try:
        index = store.near_index(HASHER)
        sigs = [_sig(_random(rng)) for _ in range(300)]
        for n, s in enumerate(sigs):
            assert index.claim(s, f"d{n}", f"d{n}") is None
        store.commit()
        nk = near.NearKeys(store.keys)
        buckets = _keys(store, f"{nk.one_hash}:*")
        assert len(buckets) > 100  # 300 x 32 band keys spread over the buckets
        encodings = {store.conn.call("OBJECT", "ENCODING", k) for k in buckets}
        assert encodings == {b"listpack"}
        assert store.conn.call("EXISTS", nk.one_hash, nk.long) == 0
        for n in range(0, 300, 37):  # each founder found again through its buckets
            found = index.find(sigs[n])
            assert found is not None and found.doc_key == f"d{n}" and found.similarity == 1.0
    finally:
        store.close(commit=False)


def test_long_lists_are_kept_apart_and_given_back(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(near, "LONG", 8)  # "1 2 3 4" at most in a bucket
    crawl = uuid.uuid4().hex[:12]
    rng = np.random.default_rng(2)
    base = _random(rng)
    family = [_sig(base)] + [_sharing(base, 6, rng) for _ in range(7)]
    store = _store(redis_server, crawl)
    try:
        index = store.near_index(HASHER)
        for n, s in enumerate(family[:5]):
            assert index.claim(s, f"f{n}", f"f{n}") is None  # 6 bands shared: founders
        store.commit()
        nk = near.NearKeys(store.keys)
        assert store.conn.call("HLEN", nk.long) == 6  # the six shared bands' lists
        names, fields = nk.fields(HASHER, family[0])
        assert store.conn.call("HGET", names[0], fields[0]) == b"x"
        assert store.conn.call("HGET", nk.long, fields[0]) == b"1 2 3 4 5"
        for n in range(5):
            found = index.find(family[n])
            assert found is not None and (found.doc_key, found.similarity) == (f"f{n}", 1.0)
        for n in range(5, 8):  # claimed and not committed: a crash
            assert index.claim(family[n], f"f{n}", f"f{n}") is None
        assert store.conn.call("HGET", nk.long, fields[0]) == b"1 2 3 4 5 6 7 8"
        store.conn.close()
    finally:
        store.close(commit=False)
    again = _store(redis_server, crawl)  # the same worker: gives its claims back
    try:
        index = again.near_index(HASHER)
        assert index.count() == 5
        assert again.conn.call("HGET", nk.long, fields[0]) == b"1 2 3 4 5"
        for n in range(5, 8):
            assert index.find(family[n]) is None
        found = index.find(family[2])
        assert found is not None and found.doc_key == "f2"
    finally:
        again.close(commit=False)


def test_a_crash_of_many_claims_leaves_no_band_behind(redis_server: RedisServer) -> None:
    crawl = uuid.uuid4().hex[:12]
    rng = np.random.default_rng(3)
    store = _store(redis_server, crawl)
    nk = near.NearKeys(store.keys)
    try:
        index = store.near_index(HASHER)
        for n in range(150):  # more than one script's worth of claims given back
            assert index.claim(_sig(_random(rng)), f"d{n}", f"d{n}") is None
        assert _keys(store, f"{nk.one_hash}:*")
        store.conn.close()
    finally:
        store.close(commit=False)
    again = _store(redis_server, crawl)
    try:
        assert again.near_index(HASHER).count() == 0
        assert _keys(again, f"{nk.one_hash}:*") == []
        assert again.conn.call("EXISTS", nk.entry, nk.of, nk.claims("w")) == 0
    finally:
        again.close(commit=False)


def test_an_index_of_one_band_hash_is_banded_again_into_buckets(
    redis_server: RedisServer,
) -> None:
    # The layout before buckets: the meta names the hasher's layout alone, and every
    # band is a field "band:key" of one hash.
    crawl = uuid.uuid4().hex[:12]
    rng = np.random.default_rng(4)
    sigs = [_sig(_random(rng)) for _ in range(40)]
    store = _store(redis_server, crawl)
    nk = near.NearKeys(store.keys)
    try:
        pipe = store.conn.pipeline()
        for n, s in enumerate(sigs, start=1):
            pipe.call("HSET", nk.entry, str(n), f"d{n}\tc{n}\t".encode() + s)
            pipe.call("HSET", nk.of, f"d{n}", str(n))
            for i, k in enumerate(HASHER.band_keys(s)):
                pipe.call("HSET", nk.one_hash, f"{i}:{k}", str(n))
        pipe.call("SET", nk.seq, len(sigs))
        pipe.execute()
        store.meta.set(near.LAYOUT_KEY, HASHER.layout)
        store.commit()
    finally:
        store.close(commit=False)
    again = _store(redis_server, crawl)
    try:
        index = again.near_index(HASHER)
        assert again.meta.get(near.LAYOUT_KEY) == near.layout(HASHER)
        assert again.conn.call("EXISTS", nk.one_hash) == 0
        assert index.count() == 40
        for n, s in enumerate(sigs, start=1):
            found = index.find(s)
            assert found is not None and (found.doc_key, found.cluster_id) == (f"d{n}", f"c{n}")
        names, fields = nk.fields(HASHER, sigs[0])
        assert again.conn.call("HGET", names[0], fields[0]) == b"1"
        index._band_again()  # as a second worker opening it at the same moment would
        assert again.conn.call("HGET", names[0], fields[0]) == b"1"  # not added twice
        assert index.claim(_sig(_random(rng)), "new", "new") is None
        assert again.conn.call("HGET", nk.entry, "41") is not None  # the order goes on
    finally:
        again.close(commit=False)
