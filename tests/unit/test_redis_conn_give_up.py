"""``Conn.retrying`` waits out an outage, unless told to give up (a worker told twice to
stop). A real client against a loopback port nothing listens on: every call fails at
once with a connection error, as against a Redis that is gone."""

from __future__ import annotations

import time

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from tests.redis_servers import free_port
from trawl.storage.redis.conn import Conn


def _closed() -> redis.Redis:
    # No retries of the client's own (redis-py retries a refused connection with a
    # backoff by default): each of Conn's attempts is one connection refused.
    return redis.Redis(port=free_port(), socket_connect_timeout=1, retry=Retry(NoBackoff(), 0))


def test_an_outage_is_waited_out_then_the_error_raised() -> None:
    conn = Conn(_closed(), outage=0.4)
    started = time.monotonic()
    with pytest.raises(redis.exceptions.ConnectionError):
        conn.call("PING")
    assert time.monotonic() - started >= 0.3
    assert conn.retries >= 2


def test_told_to_give_up_it_raises_at_once() -> None:
    asked = [False]
    conn = Conn(_closed(), outage=30, give_up=lambda: asked[0])
    asked[0] = True
    started = time.monotonic()
    with pytest.raises(redis.exceptions.ConnectionError):
        conn.call("PING")
    assert time.monotonic() - started < 1
    assert conn.retries == 0
