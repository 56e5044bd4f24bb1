"""Hosts learned to need rendering, kept in the store: every backend, and the crash rule."""

from __future__ import annotations

from tests.contract.conftest import Backend
from trawl.fetch.render.hints import MISSES, RenderHints

T0 = 1_000.0
WEEK = 7 * 86400.0


def test_a_host_learned_survives_a_commit_and_a_restart(backend: Backend) -> None:
    hints = RenderHints(backend.store().origin_files)
    assert not hints.needs("app.example", T0)
    hints.learn("app.example", gain=True, shell=True, now=T0)
    hints.learn("static.example", gain=False, shell=True, now=T0)  # nothing learned
    assert hints.needs("app.example", T0)
    backend.commit()
    again = RenderHints(backend.restart(crash=False).origin_files)
    assert again.needs("app.example", T0 + 1)
    assert not again.needs("static.example", T0 + 1)
    assert not again.needs("app.example", T0 + WEEK + 1)  # a hint lasts a week


def test_a_hint_not_committed_is_lost_in_a_crash(backend: Backend) -> None:
    hints = RenderHints(backend.store().origin_files)
    hints.learn("app.example", gain=True, shell=True, now=T0)
    fresh = RenderHints(backend.restart(crash=True).origin_files)
    assert not fresh.needs("app.example", T0)


def test_renders_the_hint_asked_for_that_add_nothing_unlearn_the_host(backend: Backend) -> None:
    hints = RenderHints(backend.store().origin_files)
    hints.learn("app.example", gain=True, shell=True, now=T0)
    hints.learn("app.example", gain=False, shell=False, now=T0 + 1)  # a miss
    hints.learn("app.example", gain=True, shell=False, now=T0 + 2)  # a hit: count again
    for i in range(MISSES):
        assert hints.needs("app.example", T0 + 3 + i)
        hints.learn("app.example", gain=False, shell=False, now=T0 + 3 + i)
    assert not hints.needs("app.example", T0 + 10)
    # Its shells still gain (each is rendered as a shell): that does not learn it again.
    hints.learn("app.example", gain=True, shell=True, now=T0 + 11)
    assert not hints.needs("app.example", T0 + 12)
    backend.commit()
    assert not RenderHints(backend.restart(crash=False).origin_files).needs("app.example", T0 + 13)
