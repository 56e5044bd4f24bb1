"""Fixtures shared by every test directory: the real Redis servers, started once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.redis_servers import RedisCluster, RedisServer


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One standalone redis-server on a loopback port, for the whole session."""
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisCluster]:
    """A Redis Cluster of 3 primaries with a replica each, for the whole session."""
    cluster = RedisCluster(Path(tmp_path_factory.mktemp("redis-cluster")))
    yield cluster
    cluster.stop()
