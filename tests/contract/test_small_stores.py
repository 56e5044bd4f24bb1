"""The RobotsStore, OriginFileStore and MetaStore contracts: small keyed records."""

from __future__ import annotations

from tests.contract.conftest import Backend
from trawl.storage.base import RobotsRow

GOOD = RobotsRow(
    host="a.example",
    status=200,
    body=b"User-agent: *\nDisallow: /private\n",
    fetched_at=1_000.0,
    expires_at=87_400.0,
)
# A network error after a good copy: no body now, the last good one kept.
UNREACHABLE = RobotsRow(
    host="a.example",
    status=None,
    body=None,
    fetched_at=2_000.0,
    expires_at=2_060.0,
    failures=3,
    unreachable_since=1_900.0,
    good_status=200,
    good_body=GOOD.body,
    good_fetched_at=1_000.0,
)


def test_robots_round_trip(backend: Backend) -> None:
    robots = backend.store().robots
    assert robots.load("a.example") is None
    robots.save(GOOD)
    robots.save(RobotsRow("b.example", 404, b"", 1_000.0, 2_000.0))
    assert robots.load("a.example") == GOOD
    assert robots.load("b.example") == RobotsRow("b.example", 404, b"", 1_000.0, 2_000.0)


def test_robots_save_replaces_and_keeps_none_bodies(backend: Backend) -> None:
    robots = backend.store().robots
    robots.save(GOOD)
    robots.save(UNREACHABLE)
    assert robots.load("a.example") == UNREACHABLE
    bare = RobotsRow("c.example", None, None, 5.0, 6.0)
    robots.save(bare)
    assert robots.load("c.example") == bare


def test_robots_survive_commit_and_restart(backend: Backend) -> None:
    backend.store().robots.save(GOOD)
    backend.commit()
    backend.store().robots.save(UNREACHABLE)
    assert backend.restart(crash=True).robots.load("a.example") == GOOD


def test_origin_files_round_trip(backend: Backend) -> None:
    files = backend.store().origin_files
    assert files.load("tdmrep.json", "https://a.example") is None
    files.save(
        "tdmrep.json", "https://a.example", status=200, body=b"[]", fetched_at=1.0, expires_at=9.0
    )
    files.save(
        "tdmrep.json", "https://b.example", status=None, body=None, fetched_at=1.0, expires_at=2.5
    )
    assert files.load("tdmrep.json", "https://a.example") == (200, b"[]", 9.0)
    assert files.load("tdmrep.json", "https://b.example") == (None, None, 2.5)
    assert files.load("other.json", "https://a.example") is None  # kept by kind


def test_origin_files_replace_and_survive_restart(backend: Backend) -> None:
    files = backend.store().origin_files
    files.save("k", "https://a.example", status=404, body=b"", fetched_at=1.0, expires_at=2.0)
    files.save("k", "https://a.example", status=200, body=b"{}", fetched_at=3.0, expires_at=4.0)
    backend.commit()
    files.save("k", "https://a.example", status=500, body=None, fetched_at=5.0, expires_at=6.0)
    files = backend.restart(crash=True).origin_files
    assert files.load("k", "https://a.example") == (200, b"{}", 4.0)


def test_meta_set_get(backend: Backend) -> None:
    meta = backend.store().meta
    assert meta.get("config") is None
    meta.set("config", '{"a": 1}')
    meta.set("scope.hosts", "[]")
    meta.set("config", '{"a": 2}')
    assert meta.get("config") == '{"a": 2}'
    assert meta.get("scope.hosts") == "[]"


def test_meta_survives_commit_only(backend: Backend) -> None:
    backend.store().meta.set("kept", "1")
    backend.commit()
    backend.store().meta.set("kept", "2")
    backend.store().meta.set("lost", "x")
    meta = backend.restart(crash=True).meta
    assert (meta.get("kept"), meta.get("lost")) == ("1", None)
    meta.set("kept", "3")
    assert backend.restart(crash=False).meta.get("kept") == "3"
