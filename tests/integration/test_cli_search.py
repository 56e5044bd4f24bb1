"""``trawl search`` and ``trawl index`` on a small crawled sample web."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
import tantivy

from tests.integration.crawlkit import crawl_sample_web
from trawl.cli import main
from trawl.index import Searcher
from trawl.storage.open import open_store
from trawl.testing.sampleweb import SampleWeb


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SampleWeb, list[str]]:
    data = tmp_path_factory.mktemp("cli-search")
    web = SampleWeb(hosts=3, pages_per_host=12, seed=8)
    hosts = [web.hosts[0], web.hosts[2]]

    port = crawl_sample_web(web, data, hosts)
    articles = []
    for url in web.urls(port=port):
        if url.split("/")[2].split(":")[0] not in hosts:
            continue
        try:
            web.distinctive_phrase(url)
        except KeyError:
            continue
        if web.duplicate_of(url) is None and web.near_duplicate_of(url) is None:
            articles.append(url)
    return data, web, articles


def test_search_plain(
    crawled: tuple[Path, SampleWeb, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    data, web, articles = crawled
    phrase = web.distinctive_phrase(articles[0])
    assert main(["search", phrase, "--data", str(data)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1. ")
    assert articles[0] in out.splitlines()[1]
    assert f"[{phrase.split()[0]}]" in out  # highlights as brackets off a terminal
    assert "<mark>" not in out
    assert " result" in out.splitlines()[-1] and out.rstrip().endswith("ms")


def test_search_json_typo_and_paging(
    crawled: tuple[Path, SampleWeb, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    data, web, articles = crawled
    phrase = web.distinctive_phrase(articles[1])
    words = phrase.split()
    longest = max(words, key=len)
    typo = phrase.replace(longest, longest[:2] + "q" + longest[3:])
    assert main(["search", typo, "--data", str(data), "--json"]) == 0
    body = orjson.loads(capsys.readouterr().out)
    assert body["corrected"] == phrase and body["correction_skipped"] is False
    assert body["results"][0]["link"] == articles[1]
    assert "<mark>" in body["results"][0]["snippet"]
    assert main(["search", typo, "--data", str(data)]) == 0
    assert capsys.readouterr().out.startswith(f"showing results for: {phrase}")
    host = web.hosts[0]
    assert main(["search", f"site:{host}", "--data", str(data), "--json", "--limit", "3"]) == 0
    first = orjson.loads(capsys.readouterr().out)
    assert len(first["results"]) == 3 and first["total"] > 3
    args = ["search", f"site:{host}", "--data", str(data), "--json", "--limit", "3", "--page", "2"]
    assert main(args) == 0
    second = orjson.loads(capsys.readouterr().out)
    assert {r["link"] for r in first["results"]}.isdisjoint(r["link"] for r in second["results"])
    assert {r["crawl"] for r in first["results"]} == {"main"}  # the directory's own crawl
    assert main(["search", f"site:{host}", "--data", str(data), "--crawl", "main"]) == 0
    capsys.readouterr()
    assert main(["search", f"site:{host}", "--data", str(data), "--crawl", "nope"]) == 2
    assert "no crawl 'nope'" in capsys.readouterr().err


@pytest.mark.parametrize("query", ['"open', "OR", "x" * 10_000, "a\x00 AND", "NOT x"])
def test_bad_queries_exit_2_with_a_message(
    crawled: tuple[Path, SampleWeb, list[str]], capsys: pytest.CaptureFixture[str], query: str
) -> None:
    assert main(["search", query, "--data", str(crawled[0])]) == 2
    err = capsys.readouterr().err
    assert err.startswith("trawl search: ") and "Traceback" not in err


def test_index_rebuilds_the_same_index(
    crawled: tuple[Path, SampleWeb, list[str]],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    original, web, articles = crawled
    data = tmp_path / "copy"
    shutil.copytree(original, data)
    with Searcher(data / "index") as s:
        before = s.num_docs
    shutil.rmtree(data / "index")
    assert main(["search", "anything", "--data", str(data)]) == 2
    assert "no index" in capsys.readouterr().err
    assert main(["index", "--data", str(data), "--quiet"]) == 0
    assert f"indexed {before} documents from {before} stored pages" in capsys.readouterr().out
    # Again over an existing index: replaced, not doubled.
    assert main(["index", "--data", str(data), "--quiet"]) == 0
    capsys.readouterr()
    with Searcher(data / "index") as s:
        assert s.num_docs == before
        r = s.search(web.distinctive_phrase(articles[2]))
        assert r.results[0].link == articles[2]


def test_index_refuses_while_a_crawl_runs(
    crawled: tuple[Path, SampleWeb, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    data = crawled[0]
    store = open_store(data)  # what a running crawl holds
    try:
        assert main(["index", "--data", str(data)]) == 2
    finally:
        store.close(commit=False)
    assert "a crawl is running on" in capsys.readouterr().err


def test_index_of_no_crawl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["index", "--data", str(tmp_path)]) == 2
    assert "holds no crawl" in capsys.readouterr().err


def test_an_older_index_is_named_and_rebuilt(
    crawled: tuple[Path, SampleWeb, list[str]],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    original, web, articles = crawled
    data = tmp_path / "copy"
    shutil.copytree(original, data)
    shutil.rmtree(data / "index")
    # The format before issue 16: bodies stored in the index, a vocab field.
    b = tantivy.SchemaBuilder()
    b.add_text_field("url", stored=True, tokenizer_name="raw")
    b.add_text_field("body_en", stored=True)
    b.add_text_field("vocab", index_option="basic")
    (data / "index").mkdir()
    writer = tantivy.Index(b.build(), path=str(data / "index")).writer(15_000_000, 1)
    writer.add_document(tantivy.Document(url="http://old.test/", body_en="old"))
    writer.commit()
    writer.wait_merging_threads()
    del writer
    assert main(["search", "anything", "--data", str(data)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("trawl search: ") and f"trawl index --data {data}" in err
    assert "Traceback" not in err
    assert main(["index", "--data", str(data), "--quiet"]) == 0
    capsys.readouterr()
    phrase = web.distinctive_phrase(articles[0])
    assert main(["search", phrase, "--data", str(data), "--json"]) == 0
    assert orjson.loads(capsys.readouterr().out)["results"][0]["link"] == articles[0]
