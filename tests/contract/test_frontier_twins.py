"""The memory and SQLite frontiers side by side: the same random work, the same answers.

The contract tests pin the rules one at a time; this runs long mixed sequences
(collisions, budgets, retries, revisits, expired leases, commits and crashes) on
both backends at once and compares every answer, so they cannot drift apart.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.contract.conftest import Backend, MemoryBackend, SqliteBackend
from tests.contract.test_frontier import T0, url
from trawl.models import Lease, NewUrl, UrlStatus

HOSTS = [f"h{i}.example" for i in range(5)]
_DONE = [UrlStatus.FETCHED, UrlStatus.FAILED, UrlStatus.SKIPPED, UrlStatus.REDIRECTED]
_OWED = (UrlStatus.QUEUED, UrlStatus.IN_FLIGHT, UrlStatus.WAITING)


def _offer(rng: random.Random) -> list[NewUrl]:
    host = rng.choice(HOSTS)
    out = []
    for _ in range(rng.randint(1, 6)):
        path = f"/{rng.randint(0, 40)}"
        # A tiny fingerprint space: collisions within a host are common. Spaced out so
        # that a probed slot (fp + 1, ...) is never another URL's own fingerprint: SQLite
        # would refuse that batch (a clash no real 64-bit fingerprints come near).
        out.append(url(host, path, depth=rng.randint(0, 3), fp=100 * rng.randint(0, 12)))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_memory_and_sqlite_answer_alike(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    twins: list[Backend] = [MemoryBackend(), SqliteBackend(tmp_path)]
    try:
        frontiers = [b.frontier(max_per_host=30, lease_seconds=30.0) for b in twins]
        held: list[list[Lease]] = [[], []]
        done: list[list[Lease]] = [[], []]  # finished: candidates for later stages
        now = T0
        for step in range(400):
            now += rng.choice([0.0, 0.0, 0.5, 3.0, 20.0])
            op = rng.random()
            answers: list[object] = []
            for side, f in enumerate(frontiers):
                r = random.Random(f"{seed}-{step}")  # the same choices on both sides
                leases = held[side]
                if op < 0.25:
                    answers.append(f.add(_offer(r), now=now))
                elif op < 0.5:
                    lease = f.take(now)
                    if lease is not None:
                        leases.append(lease)
                    answers.append(lease)
                elif op < 0.7 and leases:
                    lease = leases.pop(r.randrange(len(leases)))
                    ready = now + r.choice([0.0, 1.0, 5.0])
                    kind = r.random()
                    if kind < 0.6:
                        f.finish(lease, r.choice(_DONE), host_ready_at=ready, etag=str(step))
                        done[side].append(lease)
                    elif kind < 0.85:
                        f.retry(
                            lease, due=now + r.choice([1.0, 10.0]), host_ready_at=ready, reason="x"
                        )
                    else:
                        f.requeue(lease, host_ready_at=ready)
                    answers.append(lease)
                elif op < 0.78:
                    answers.append((f.wake_due(now), f.reclaim_expired(now)))
                elif op < 0.84 and done[side]:
                    # A later stage: parsed, skipped as a duplicate, or due for a revisit.
                    lease = done[side][r.randrange(len(done[side]))]
                    record = f.get(lease.host, lease.fp)
                    if record is not None and record.status not in _OWED:
                        if r.random() < 0.5:
                            f.set_status(lease.host, lease.fp, UrlStatus.PARSED, reason="ok")
                        else:
                            f.revisit(lease.host, lease.fp, due=now + 15.0, interval=15.0)
                    answers.append(f.get(lease.host, lease.fp))
                elif op < 0.87:
                    f.demote_host(
                        r.choice(HOSTS),
                        priority=r.randint(1, 4),
                        budget=r.randint(2, 9),
                        reason="d",
                    )
                    answers.append(None)
                elif op < 0.95:
                    twins[side].commit()
                    answers.append(None)
                else:
                    frontiers[side] = twins[side].restart(crash=r.random() < 0.7).frontier
                    leases.clear()  # they died with the process that held them
                    answers.append(None)
            assert answers[0] == answers[1], f"step {step}"
            views = [
                (
                    f.counts(),
                    f.next_wake(now),
                    f.next_wake_due(),
                    f.hosts_ready(now),
                    f.hosts_waiting(now),
                    [f.host_info(h) for h in HOSTS],
                )
                for f in frontiers
            ]
            assert views[0] == views[1], f"step {step}"
    finally:
        for b in twins:
            b.close()
