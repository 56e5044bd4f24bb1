"""The ParseQueue contract: fetched pages wait here, in order, until acked."""

from __future__ import annotations

from typing import Any

from tests.contract.conftest import Backend


def test_put_then_pending_in_order(backend: Backend) -> None:
    q = backend.store().parse_queue
    assert len(q) == 0
    assert q.pending() == []
    seqs = [q.put("a.example", n, {"url": f"https://a.example/{n}", "n": n}) for n in range(3)]
    assert seqs == sorted(seqs) and len(set(seqs)) == 3
    assert q.pending() == [
        (s, {"url": f"https://a.example/{n}", "n": n}) for n, s in enumerate(seqs)
    ]
    assert len(q) == 3


def test_pending_after_and_limit(backend: Backend) -> None:
    q = backend.store().parse_queue
    seqs = [q.put("a.example", n, {"n": n}) for n in range(5)]
    assert [s for s, _ in q.pending(limit=2)] == seqs[:2]
    assert [s for s, _ in q.pending(after=seqs[1])] == seqs[2:]
    assert [s for s, _ in q.pending(after=seqs[1], limit=2)] == seqs[2:4]
    assert q.pending(after=seqs[-1]) == []


def test_ack_removes_one_entry(backend: Backend) -> None:
    q = backend.store().parse_queue
    seqs = [q.put("a.example", n, {"n": n}) for n in range(3)]
    q.ack(seqs[1])
    q.ack(seqs[1])  # twice: no effect
    assert [job["n"] for _, job in q.pending()] == [0, 2]
    assert len(q) == 2
    later = q.put("a.example", 9, {"n": 9})
    assert later > seqs[-1]


def test_jobs_are_stored_by_value(backend: Backend) -> None:
    q = backend.store().parse_queue
    job: dict[str, Any] = {
        "warc": ["trawl-00001.warc.gz", 0, 10],
        "links": {"depth": 2},
        "title": None,
    }
    seq = q.put("a.example", 1, job)
    job["title"] = "changed after put"
    [(got_seq, got)] = q.pending()
    assert got_seq == seq
    assert got == {"warc": ["trawl-00001.warc.gz", 0, 10], "links": {"depth": 2}, "title": None}
    got["links"]["depth"] = 7
    assert q.pending()[0][1]["links"] == {"depth": 2}


def test_queue_survives_restart_and_loses_uncommitted_puts(backend: Backend) -> None:
    q = backend.store().parse_queue
    kept = q.put("a.example", 1, {"n": 1})
    backend.commit()
    q.put("a.example", 2, {"n": 2})
    q = backend.restart(crash=True).parse_queue
    assert q.pending() == [(kept, {"n": 1})]
    q.put("a.example", 3, {"n": 3})
    q = backend.restart(crash=False).parse_queue
    assert [job["n"] for _, job in q.pending()] == [1, 3]
