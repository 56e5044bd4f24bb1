"""`trawl robots ...` in process: answer formats and argument checking (fast, no subprocess)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trawl.cli import main
from trawl.cli._robots import format_seconds


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(2.5, "2.5"), (1.0, "1"), (0.0, "0"), (10.0, "10"), (0.25, "0.25"), (100.0, "100"),
     (1e16, "10000000000000000"), (1e-05, "0.00001"), (0.1, "0.1"), (12.125, "12.125")],
)  # fmt: skip
def test_format_seconds(seconds: float, text: str) -> None:
    assert format_seconds(seconds) == text
    assert float(text) == seconds


@pytest.fixture
def robots_file(tmp_path: Path) -> Path:
    path = tmp_path / "robots.txt"
    path.write_bytes(b"User-agent: *\nDisallow: /x\nCrawl-delay: 0.5\nSitemap: https://e/s.xml\n")
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main(["robots", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_answers(capsys: pytest.CaptureFixture[str], robots_file: Path) -> None:
    assert run(capsys, "check", robots_file, "trawl", "/x/y") == (0, "disallowed\n", "")
    assert run(capsys, "check", robots_file, "trawl", "http://e/z") == (0, "allowed\n", "")
    assert run(capsys, "crawl-delay", robots_file, "trawl") == (0, "0.5\n", "")
    assert run(capsys, "sitemaps", robots_file) == (0, "https://e/s.xml\n", "")


@pytest.mark.parametrize(
    "status", ["abc", "99", "600", "2OO", "", "-1", "200.0", "1e2", "1_0_0", "２００", "0200"]
)
def test_bad_status_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], robots_file: Path, status: str
) -> None:
    code, out, err = run(capsys, "check", "--status", status, robots_file, "trawl", "/")
    assert (code, out) == (2, "")
    assert err == (
        f"trawl robots check: invalid --status {status!r}: "
        "expected an HTTP status (100-599) or 'error'\n"
    )


@pytest.mark.parametrize("status", ["200", " 200", "299", "error", "Error", " error "])
def test_good_status_values(
    capsys: pytest.CaptureFixture[str], robots_file: Path, status: str
) -> None:
    assert run(capsys, "check", "--status", status, robots_file, "trawl", "/x")[0] == 0


@pytest.mark.parametrize("agent", [",", "", " , ", ",,"])
def test_bad_agent(capsys: pytest.CaptureFixture[str], robots_file: Path, agent: str) -> None:
    code, out, err = run(capsys, "crawl-delay", robots_file, agent)
    assert (code, out) == (2, "")
    assert err.startswith("trawl robots crawl-delay: invalid AGENT")
    assert err.count("\n") == 1


def test_unreadable_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "crawl-delay", tmp_path / "nope", "trawl")
    assert (code, out) == (2, "")
    assert err.startswith("trawl robots crawl-delay: cannot read ")
    assert err.endswith(": No such file or directory\n")


def test_only_the_parse_limit_is_read(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"User-agent: *\n" + b"#" * 600_000 + b"\nDisallow: /\n")
    assert run(capsys, "check", path, "trawl", "/x") == (0, "allowed\n", "")
