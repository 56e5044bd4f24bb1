"""Property-based requests to the crawl-steering endpoints from the OpenAPI document.

The app serves two crawls that have no process (one finished, one failed: steering a
failed crawl is recorded for when it resumes, so no crawl process starts here), and
schemathesis sends valid and invalid seeds, changes and deletions with the token: every
answer must be documented (status, content type, body schema), never a 5xx.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from tests.api.threadserve import serve_in_thread
from trawl.api.app import build_openapi, create_app
from trawl.service.routes import ServiceRoutes
from trawl.service.spec import check_spec
from trawl.telemetry import write_json_atomic

TOKEN = "schemathesis-control-token-0123456789"
CRAWLS = {"done-1": "finished", "failed-1": "failed"}
OPERATIONS = ("addSeeds", "changeCrawl", "deleteCrawl", "getCrawl", "listCrawls")


def _document() -> dict[str, Any]:
    doc = build_openapi([ServiceRoutes(Path("unused"))], title="trawl", version="test")
    doc = copy.deepcopy(doc)
    # Crawl ids drawn from those that exist (and one that does not).
    for path in ("/v1/crawls/{id}", "/v1/crawls/{id}/seeds"):
        for operation in doc["paths"][path].values():
            for parameter in operation.get("parameters", []):
                if parameter["name"] == "id":
                    parameter["schema"] = {"enum": [*CRAWLS, "nope"]}
    return doc


schema = schemathesis.openapi.from_dict(_document())


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("steering")
    spec = check_spec({"seeds": ["https://example.org/"]})
    for crawl_id, desired in CRAWLS.items():
        directory = data / "crawls" / crawl_id
        directory.mkdir(parents=True)
        write_json_atomic(directory / "state.json", {"desired": desired, "created": time.time()})
        write_json_atomic(directory / "spec.json", spec)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TRAWL_TOKEN", TOKEN)
        yield from serve_in_thread(lambda: create_app(data, route_sets=[ServiceRoutes(data)]))


@schema.include(operation_id_regex=f"^({'|'.join(OPERATIONS)})$").parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_steering_conforms_to_its_openapi_document(
    case: schemathesis.Case[Any], base_url: str
) -> None:
    case.call_and_validate(
        base_url=base_url.rstrip("/"),
        headers={"Authorization": f"Bearer {TOKEN}"},
        excluded_checks=[positive_data_acceptance],
    )
