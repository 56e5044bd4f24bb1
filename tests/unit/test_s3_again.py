"""Requests the S3 client does not retry (POSTs: a multi-object delete, a multipart
upload's create and complete) are made again here while they do not reach the service,
for as long as the client retries the others (fake time)."""

from __future__ import annotations

import pytest
from obstore.exceptions import GenericError

from trawl.storage.s3.objects import again_while_unsent

UNSENT = "Error performing POST http://s3/b?delete in 8ms - HTTP error: error sending request"


class Clock:
    def __init__(self) -> None:
        self.t = 0.0
        self.slept: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += seconds


def test_a_request_that_did_not_reach_the_service_is_made_again_until_it_does() -> None:
    clock, tries = Clock(), []

    def call() -> str:
        tries.append(clock.t)
        if len(tries) < 4:
            raise GenericError(UNSENT)
        return "deleted"

    assert again_while_unsent(call, now=clock.now, sleep=clock.sleep) == "deleted"
    assert clock.slept == [0.5, 1.0, 2.0]  # backing off from 0.5 s


def test_it_gives_up_within_its_time_and_says_the_last_error() -> None:
    clock = Clock()

    def call() -> None:
        raise GenericError(UNSENT)

    with pytest.raises(GenericError, match="error sending request"):
        again_while_unsent(call, within=30.0, now=clock.now, sleep=clock.sleep)
    assert clock.t <= 30.0 and max(clock.slept) == 5.0  # up to 5 s apart
    assert sum(clock.slept) > 25.0


def test_an_answer_of_the_service_is_not_asked_again() -> None:
    clock, tries = Clock(), []

    def call() -> None:
        tries.append(1)
        raise GenericError("<Code>NoSuchBucket</Code>")

    with pytest.raises(GenericError, match="NoSuchBucket"):
        again_while_unsent(call, now=clock.now, sleep=clock.sleep)
    assert tries == [1] and clock.slept == []
