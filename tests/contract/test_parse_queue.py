"""The ParseQueue contract: fetched pages wait here, in order, until acked."""

from __future__ import annotations

from dataclasses import replace

from tests.contract.conftest import Backend
from trawl.jobs import ParseJob, TdmFileDecision
from trawl.models import Location


def job(n: int, *, host: str = "a.example", **changes: object) -> ParseJob:
    """A parse job for page ``n`` (fields as the fetch stage fills them)."""
    base = ParseJob(
        host=host,
        fp=n,
        url=f"https://{host}/{n}",
        final_url=f"https://{host}/{n}",
        depth=1,
        fetched_at=1_000.0 + n,
        status=200,
        headers=(("Content-Type", "text/html"),),
        content_type="text/html",
        warc=Location("trawl-00001.warc.gz", 100 * n, 90),
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_put_then_pending_in_order(backend: Backend) -> None:
    q = backend.store().parse_queue
    assert len(q) == 0
    assert q.pending() == []
    seqs = [q.put(job(n)) for n in range(3)]
    assert seqs == sorted(seqs) and len(set(seqs)) == 3
    assert q.pending() == [(s, job(n)) for n, s in enumerate(seqs)]
    assert len(q) == 3


def test_pending_after_and_limit(backend: Backend) -> None:
    q = backend.store().parse_queue
    seqs = [q.put(job(n)) for n in range(5)]
    assert [s for s, _ in q.pending(limit=2)] == seqs[:2]
    assert [s for s, _ in q.pending(after=seqs[1])] == seqs[2:]
    assert [s for s, _ in q.pending(after=seqs[1], limit=2)] == seqs[2:4]
    assert q.pending(after=seqs[-1]) == []


def test_own_entries_are_never_taken_over(backend: Backend) -> None:
    q = backend.store().parse_queue
    seqs = [q.put(job(n)) for n in range(3)]
    backend.commit()
    assert q.taken_over() == []
    assert [s for s, _ in q.pending()] == seqs  # still pending


def test_ack_removes_one_entry(backend: Backend) -> None:
    q = backend.store().parse_queue
    seqs = [q.put(job(n)) for n in range(3)]
    q.ack(seqs[1])
    q.ack(seqs[1])  # twice: no effect
    assert [j.fp for _, j in q.pending()] == [0, 2]
    assert len(q) == 2
    later = q.put(job(9))
    assert later > seqs[-1]


def test_every_field_of_a_job_is_kept(backend: Backend) -> None:
    """What the fetch knew reaches the parse, also after a restart: the origin's
    tdmrep.json decision, the previous content hash, the revisit interval."""
    full = job(
        1,
        url="https://a.example/old",
        truncated="length",
        previous_hash="ab" * 16,
        revisit=3600.0,
        tdm_well_known=TdmFileDecision(True, "https://a.example/policy"),
    )
    q = backend.store().parse_queue
    seq = q.put(full)
    assert q.pending() == [(seq, full)]
    backend.commit()
    assert backend.restart(crash=True).parse_queue.pending() == [(seq, full)]


def test_queue_survives_restart_and_loses_uncommitted_puts(backend: Backend) -> None:
    q = backend.store().parse_queue
    kept = q.put(job(1))
    backend.commit()
    q.put(job(2))
    q = backend.restart(crash=True).parse_queue
    assert q.pending() == [(kept, job(1))]
    q.put(job(3))
    q = backend.restart(crash=False).parse_queue
    assert [j.fp for _, j in q.pending()] == [1, 3]


def test_seqs_only_grow_even_after_the_queue_drained(backend: Backend) -> None:
    """A reader in another process polls ``pending(after=last seq seen)``: a seq used
    again after the queue emptied would hide that entry from it for good."""
    q = backend.store().parse_queue
    first = [q.put(job(n)) for n in range(3)]
    for s in first:
        q.ack(s)
    backend.commit()
    assert len(q) == 0
    again = q.put(job(9))
    assert again > max(first)
    assert q.pending(after=max(first)) == [(again, job(9))]
    q.ack(again)
    backend.commit()
    q = backend.restart(crash=False).parse_queue
    later = q.put(job(10))
    assert later > again
    backend.commit()
    q = backend.restart(crash=True).parse_queue  # the commit above kept ``later``
    assert q.put(job(11)) > later
