"""Servers shared by the whole test session, each started on first use and
killed when the session ends.

``redis_server`` / ``redis_cluster``: real redis-server processes on loopback ports
(standalone; a Redis Cluster of 3 primaries with a replica each). ``s3_server``: one
SeaweedFS (``trawl.testing.s3server``) with its own temp dir. ``s3_url``: a new bucket
for one test, with the standard AWS variables pointing at the server (set for the
test only, and inherited by the processes it starts).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.redis_servers import RedisCluster, RedisServer
from trawl.testing.s3server import SeaweedS3

_buckets = itertools.count(1)


@pytest.fixture(autouse=True)
def _own_politeness_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test's crawls share host leases with each other only, never with another
    test's (which may run on a fake clock) or the user's (the default politeness_dir
    is under XDG_STATE_HOME, inherited by the processes a test starts)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
    monkeypatch.delenv("TRAWL_POLITENESS_DIR", raising=False)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One standalone redis-server on a loopback port, for the whole session."""
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeaweedS3]:
    server = SeaweedS3.start(tmp_path_factory.mktemp("seaweedfs"))
    yield server
    server.stop()


def point_aws_at(server: SeaweedS3, monkeypatch: pytest.MonkeyPatch) -> None:
    """The standard AWS variables set to ``server`` for one test (and the processes it
    starts), and those that would point elsewhere unset."""
    for name, value in server.env().items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_ENDPOINT_URL_S3", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def s3_url(s3_server: SeaweedS3, monkeypatch: pytest.MonkeyPatch) -> str:
    """``s3://BUCKET/crawl`` in a bucket of its own, the AWS variables set for it."""
    point_aws_at(s3_server, monkeypatch)
    bucket = s3_server.create_bucket(f"test-{next(_buckets):04d}")
    return f"s3://{bucket}/crawl"


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisCluster]:
    """A Redis Cluster of 3 primaries with a replica each, for the whole session."""
    cluster = RedisCluster(Path(tmp_path_factory.mktemp("redis-cluster")))
    yield cluster
    cluster.stop()
