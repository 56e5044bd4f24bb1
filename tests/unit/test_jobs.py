"""The typed records between the stages."""

from __future__ import annotations

import orjson
import pytest

from trawl.jobs import OutcomeKind, ParseJob, ParseOutcome, TdmFileDecision
from trawl.models import Location

JOB = ParseJob(
    host="a.example",
    fp=-42,
    url="https://a.example/old",
    final_url="https://a.example/new",
    depth=3,
    fetched_at=1_700_000_000.25,
    status=200,
    headers=(("Content-Type", "text/html"), ("ETag", '"x"')),
    content_type="text/html",
    warc=Location("trawl-00002.warc.gz", 1234, 567),
    truncated="length",
    previous_hash="ab" * 16,
    revisit=86_400.0,
    tdm_well_known=TdmFileDecision(True, "https://a.example/policy.json"),
    rendered=Location("trawl-00002.warc.gz", 1801, 300),
    render="rendered: auto: empty mount point #root",
)


def test_a_job_round_trips_through_its_durable_form() -> None:
    assert ParseJob.load(JOB.dump()) == JOB
    bare = ParseJob(
        host="b.example",
        fp=1,
        url="http://b.example/",
        final_url="http://b.example/",
        depth=0,
        fetched_at=1.0,
        status=200,
        headers=(),
        content_type=None,
        warc=Location("trawl-00001.warc.gz", 0, 10),
    )
    assert ParseJob.load(bare.dump()) == bare


def test_a_job_queued_before_jobs_were_typed_still_loads() -> None:
    old = {
        "host": "a.example",
        "fp": 7,
        "url": "https://a.example/",
        "final_url": "https://a.example/",
        "depth": 0,
        "fetched_at": 5.5,
        "status": 200,
        "headers": [["Content-Type", "text/html"]],
        "content_type": "text/html",
        "warc": ["trawl-00001.warc.gz", 10, 20],
        "truncated": None,
        "previous_hash": None,
        "revisit": None,
        "tdm_well_known": [True, None],
    }
    job = ParseJob.load(orjson.dumps(old).decode())
    assert job.warc == Location("trawl-00001.warc.gz", 10, 20)
    assert job.headers == (("Content-Type", "text/html"),)
    assert job.tdm_well_known == TdmFileDecision(True, None)


@pytest.mark.parametrize(
    ("outcome", "text"),
    [
        (ParseOutcome(OutcomeKind.STORED), "stored"),
        (
            ParseOutcome(OutcomeKind.DUPLICATE, "https://a.example/"),
            "duplicate of https://a.example/",
        ),
        (
            ParseOutcome(OutcomeKind.NEAR_DUPLICATE, "https://b.example/x"),
            "near duplicate of https://b.example/x",
        ),
        (ParseOutcome(OutcomeKind.CANONICAL, "https://c.example/"), "canonical https://c.example/"),
        (ParseOutcome(OutcomeKind.OPTED_OUT, "noai, noimageai"), "opted out: noai, noimageai"),
        (ParseOutcome(OutcomeKind.LOW_QUALITY, "words<60"), "low quality: words<60"),
        (ParseOutcome(OutcomeKind.BINARY), "binary content"),
        (ParseOutcome(OutcomeKind.ERROR, "bad markup"), "error bad markup"),
        (ParseOutcome(OutcomeKind.NO_TEXT), "no text"),
    ],
)
def test_an_outcome_reads_back_from_its_text(outcome: ParseOutcome, text: str) -> None:
    assert str(outcome) == text
    assert ParseOutcome.parse(text) == outcome


def test_duplicate_of_and_counters() -> None:
    near = ParseOutcome(OutcomeKind.NEAR_DUPLICATE, "https://b.example/x")
    assert near.duplicate_of == "https://b.example/x"
    assert ParseOutcome(OutcomeKind.STORED).duplicate_of is None
    assert OutcomeKind.NEAR_DUPLICATE.counter == "parse:near"
    assert OutcomeKind.DUPLICATE.counter == "parse:duplicate"
    assert OutcomeKind.OPTED_OUT.counter == "parse:opted"
    assert ParseOutcome.parse("robots") is None
    assert ParseOutcome.parse("storedx") is None
