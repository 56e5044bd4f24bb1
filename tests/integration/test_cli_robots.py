"""`trawl robots ...` run as the installed command, in a subprocess, as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

TRAWL = Path(sys.executable).parent / "trawl"

ROBOTS = (
    b"\xef\xbb\xbfUser-agent: *\n"
    b"Disallow: /private/\n"
    b"Crawl-delay: 2.5\n"
    b"Sitemap: https://example.com/sitemap.xml\n"
    b"\n"
    b"User-agent: GPTBot\n"
    b"Disallow: /\n"
    b"Crawl-delay: 10\n"
    b"\n"
    b"User-agent: CCBot\n"
    b"Allow: /\n"
    b"Crawl-delay: 1.0\n"
    b"Sitemap: https://example.com/news.xml\n"
    b"sitemap: https://example.com/sitemap.xml\n"
)


def trawl(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(TRAWL), "robots", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture(scope="module")
def robots_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("robots") / "robots.txt"
    path.write_bytes(ROBOTS)
    return path


def test_the_command_is_installed_next_to_the_interpreter() -> None:
    assert TRAWL.exists(), f"{TRAWL} missing: run `pip install -e .`"


@pytest.mark.parametrize(
    ("agent", "url", "answer"),
    [
        ("trawl", "https://example.com/public/page.html", "allowed"),
        ("trawl", "https://example.com/private/page.html?x=1", "disallowed"),
        ("trawl", "/private/", "disallowed"),
        ("trawl,GPTBot", "/public", "disallowed"),
        ("trawl, CCBot", "/private/x", "disallowed"),
        ("CCBot", "/private/x", "allowed"),
    ],
)
def test_check(robots_file: Path, agent: str, url: str, answer: str) -> None:
    result = trawl("check", robots_file, agent, url)
    assert (result.returncode, result.stdout, result.stderr) == (0, answer + "\n", "")


@pytest.mark.parametrize(
    ("status", "answer"),
    [("200", "disallowed"), ("404", "allowed"), ("503", "disallowed"), ("ERROR", "disallowed")],
)
def test_check_with_status(robots_file: Path, status: str, answer: str) -> None:
    result = trawl("check", "--status", status, robots_file, "trawl", "/private/x")
    assert (result.returncode, result.stdout) == (0, answer + "\n")


def test_status_without_a_body_does_not_read_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "never-written.txt"
    assert trawl("check", "--status", "404", missing, "trawl", "/x").stdout == "allowed\n"
    assert trawl("check", "--status", "error", missing, "trawl", "/x").stdout == "disallowed\n"


@pytest.mark.parametrize(
    ("agent", "answer"),
    [("trawl", "2.5"), ("CCBot", "1"), ("trawl,GPTBot", "10")],
)
def test_crawl_delay(robots_file: Path, agent: str, answer: str) -> None:
    result = trawl("crawl-delay", robots_file, agent)
    assert (result.returncode, result.stdout, result.stderr) == (0, answer + "\n", "")


def test_crawl_delay_none(tmp_path: Path, robots_file: Path) -> None:
    path = tmp_path / "robots.txt"
    path.write_bytes(b"User-agent: *\nDisallow: /x\n")
    assert trawl("crawl-delay", path, "trawl").stdout == "none\n"
    assert trawl("crawl-delay", "--status", "404", robots_file, "trawl").stdout == "none\n"


def test_sitemaps_in_file_order_without_duplicates(robots_file: Path) -> None:
    result = trawl("sitemaps", robots_file)
    expected = "https://example.com/sitemap.xml\nhttps://example.com/news.xml\n"
    assert (result.returncode, result.stdout, result.stderr) == (0, expected, "")


def test_sitemaps_none_prints_nothing(tmp_path: Path, robots_file: Path) -> None:
    path = tmp_path / "robots.txt"
    path.write_bytes(b"User-agent: *\nDisallow:\n")
    result = trawl("sitemaps", path)
    assert (result.returncode, result.stdout) == (0, "")
    assert trawl("sitemaps", "--status", "410", robots_file).stdout == ""


def _assert_one_line_error(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.txt"
    _assert_one_line_error(trawl("check", missing, "trawl", "/"), "cannot read", "missing.txt")
    _assert_one_line_error(trawl("sitemaps", missing), "No such file")


def test_directory_instead_of_file(tmp_path: Path) -> None:
    _assert_one_line_error(trawl("sitemaps", tmp_path), "cannot read")


@pytest.mark.parametrize("status", ["abc", "600", ""])
def test_bad_status(robots_file: Path, status: str) -> None:
    result = trawl("check", "--status", status, robots_file, "trawl", "/")
    _assert_one_line_error(result, "--status", "error")


@pytest.mark.parametrize("agent", [" , "])
def test_bad_agent(robots_file: Path, agent: str) -> None:
    _assert_one_line_error(trawl("check", robots_file, agent, "/"), "AGENT")


def test_missing_arguments_exit_2_without_traceback(robots_file: Path) -> None:
    for args in (("check", robots_file, "trawl"), ()):
        result = trawl(*args)
        assert result.returncode == 2
        assert "usage:" in result.stderr
        assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ((), ["check", "crawl-delay", "sitemaps"]),
        (("check",), ["ROBOTS_FILE", "AGENT", "URL", "--status"]),
        (("crawl-delay",), ["ROBOTS_FILE", "AGENT", "--status", "none"]),
        (("sitemaps",), ["ROBOTS_FILE", "--status"]),
    ],
)
def test_help(command: tuple[str, ...], words: list[str]) -> None:
    result = trawl(*command, "--help")
    assert result.returncode == 0
    assert result.stdout.startswith("usage: trawl robots")
    for word in words:
        assert word in result.stdout
