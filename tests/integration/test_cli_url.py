"""`trawl url ...` through the installed command, plus its DNS branch in-process."""

from __future__ import annotations

import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from trawl.cli import main
from trawl.urls import fingerprint, normalize

TRAWL = Path(sys.executable).with_name("trawl")

# Every run of the installed command, started together (each one pays the interpreter's
# start-up) and looked up by name in the tests.
_COMMANDS: dict[str, tuple[str, ...]] = {
    "help": ("--help",),
    "help normalize": ("normalize", "--help"),
    "help join": ("join", "--help"),
    "help fingerprint": ("fingerprint", "--help"),
    "help check-address": ("check-address", "--help"),
    "normalize": ("normalize", "HTTPS://Books.Example:443/a/./b/../%7ec?utm_source=x#top"),
    "normalize strip": ("normalize", "--strip-tracking", "https://books.example/a?utm_source=x"),
    "normalize keep": ("normalize", "--keep-tracking", "https://books.example/a?utm_source=x"),
    "normalize dash": ("normalize", "--", "https://b.example/-"),
    "normalize bad": ("normalize", "mailto:x@y.example"),
    "join": ("join", "https://books.example/a/b/c", "../d?utm_source=x&q=1#f"),
    "join strip": ("join", "--strip-tracking", "https://books.example/a/b/c", "../d?utm_source=x"),
    "join keep": ("join", "--keep-tracking", "https://books.example/a/b/c", "../d?utm_source=x"),
    "join bad": ("join", "https://books.example/", "javascript:void(0)"),
    "join missing": ("join", "https://books.example/"),
    "no subcommand": (),
    "fingerprint": ("fingerprint", "HTTPS://Books.Example/"),
    "fingerprint bad": ("fingerprint", "books.example"),
    "check blocked": ("check-address", "http://2130706433/"),
    "check allowed": ("check-address", "8.8.8.8"),
    "check opted in": ("check-address", "--allow-network", "127.0.0.0/8", "http://127.1/"),
    "check bad": ("check-address", "a.example:80"),
    "check bad network": ("check-address", "--allow-network", "10.0.0.1/8", "10.0.0.1"),
}


@pytest.fixture(scope="module")
def cli() -> dict[str, subprocess.CompletedProcess[str]]:
    assert TRAWL.exists(), f"the trawl command is not installed next to {sys.executable}"

    def run(args: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(TRAWL), "url", *args], capture_output=True, text=True, timeout=120, check=False
        )

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = dict(zip(_COMMANDS, pool.map(run, _COMMANDS.values()), strict=True))
    return results


Runs = dict[str, subprocess.CompletedProcess[str]]


def _assert_clean_error(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in lines[0]


@pytest.mark.parametrize(
    "name", ["help", "help normalize", "help join", "help fingerprint", "help check-address"]
)
def test_help(cli: Runs, name: str) -> None:
    result = cli[name]
    assert result.returncode == 0
    assert result.stdout.startswith("usage: trawl url")
    assert result.stderr == ""


def test_normalize(cli: Runs) -> None:
    result = cli["normalize"]
    assert (result.returncode, result.stdout, result.stderr) == (
        0,
        "https://books.example/a/~c\n",
        "",
    )
    assert (cli["normalize strip"].returncode, cli["normalize strip"].stdout) == (
        0,
        "https://books.example/a\n",
    )
    assert (cli["normalize keep"].returncode, cli["normalize keep"].stdout) == (
        0,
        "https://books.example/a?utm_source=x\n",
    )
    # a URL that starts with "-" is still a URL after "--"
    assert cli["normalize dash"].stdout == "https://b.example/-\n"


def test_normalize_help_lists_the_tracking_parameters(cli: Runs) -> None:
    text = cli["help normalize"].stdout
    assert "--keep-tracking" in text
    for name in ("utm_*", "gclid", "fbclid", "msclkid", "_hsenc", "wickedid", "srsltid"):
        assert name in text


def test_normalize_bad_input(cli: Runs) -> None:
    _assert_clean_error(cli["normalize bad"], "unsupported scheme")


@pytest.mark.parametrize(
    ("url", "word"),
    [("http://a.example:99999/", "bad port"), ("http://xn--zz/", "bad IDN"), ("a", "no scheme")],
)
def test_normalize_bad_input_messages(
    capsys: pytest.CaptureFixture[str], url: str, word: str
) -> None:
    assert main(["url", "normalize", url]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("trawl url normalize: ") and word in err


def test_join(cli: Runs) -> None:
    result = cli["join"]
    assert (result.returncode, result.stdout) == (0, "https://books.example/a/d?q=1\n")
    assert (cli["join strip"].returncode, cli["join strip"].stdout) == (
        0,
        "https://books.example/a/d\n",
    )
    assert cli["join keep"].stdout == "https://books.example/a/d?utm_source=x\n"
    _assert_clean_error(cli["join bad"], "unsupported scheme")


def test_usage_errors_exit_2(cli: Runs) -> None:
    for name in ("join missing", "no subcommand"):
        assert cli[name].returncode == 2
        assert cli[name].stdout == ""
        assert "usage: trawl url" in cli[name].stderr
        assert "Traceback" not in cli[name].stderr


def test_fingerprint(cli: Runs) -> None:
    result = cli["fingerprint"]
    assert result.returncode == 0
    assert int(result.stdout) == fingerprint(normalize("https://books.example/"))
    _assert_clean_error(cli["fingerprint bad"], "no scheme")


def test_check_address(cli: Runs) -> None:
    blocked = cli["check blocked"]
    assert (blocked.returncode, blocked.stdout) == (0, "blocked\n")
    assert blocked.stderr.strip() == "trawl url check-address: loopback"
    allowed = cli["check allowed"]
    assert (allowed.returncode, allowed.stdout, allowed.stderr) == (0, "allowed\n", "")
    opted_in = cli["check opted in"]
    assert (opted_in.returncode, opted_in.stdout) == (0, "allowed\n")


def test_check_address_bad_input(cli: Runs) -> None:
    _assert_clean_error(cli["check bad"], "not an IP address")
    _assert_clean_error(cli["check bad network"], "--allow-network", "host bits set")


@pytest.mark.parametrize(
    ("args", "answer", "reason"),
    [
        (("127.0.0.1",), "blocked", "loopback"),
        (("[::1]",), "blocked", "loopback"),
        (("::1",), "blocked", "loopback"),
        (("::ffff:10.0.0.1",), "blocked", "private"),
        (("2002:7f00:1::",), "blocked", "loopback"),
        (("64:ff9b::808:808",), "allowed", ""),
        (("8.8.8.8",), "allowed", ""),
        (("http://0x7f.1:8080/x",), "blocked", "loopback"),
        (("http://0177.0.0.1/",), "blocked", "loopback"),
        (("http://[::ffff:7f00:1]/",), "blocked", "loopback"),
        (("http://169.254.169.254/latest/",), "blocked", "link-local"),
        (("http://100.64.0.1/",), "blocked", "cgnat"),
        (("https://localhost/",), "blocked", "loopback"),
        (("--allow-network", "10.0.0.0/8", "--allow-network", "::1/128", "[::1]"), "allowed", ""),
        (("--allow-network", "10.0.0.0/8", "http://127.0.0.1/"), "blocked", "loopback"),
    ],
)
def test_check_address_answers(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], answer: str, reason: str
) -> None:
    assert main(["url", "check-address", *args]) == 0
    out, err = capsys.readouterr()
    assert out == answer + "\n"
    assert (reason in err) if reason else (err == "")


@pytest.mark.parametrize(
    ("args", "word"),
    [
        (("a.example:80",), "not an IP address"),
        (("",), "not an IP address"),
        (("ftp://127.0.0.1/",), "unsupported scheme"),
        (("http://[::1/",), "not a valid URL"),
    ],
)
def test_check_address_bad_input_messages(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], word: str
) -> None:
    assert main(["url", "check-address", *args]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert word in err
    assert len(err.strip().splitlines()) == 1


# --- the DNS branch, in-process with a stubbed resolver ----------------------------------------


def _resolver(answers: dict[str, list[str]]) -> Any:
    def getaddrinfo(host: str, *_args: object, **_kwargs: object) -> list[Any]:
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, 0))
            for a in answers[host]
        ]

    return getaddrinfo


@pytest.mark.parametrize(
    ("answers", "answer", "reason"),
    [
        (["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"], "allowed", ""),
        (["93.184.216.34", "10.0.0.7"], "blocked", "resolves to 10.0.0.7: private"),
        (["::1"], "blocked", "resolves to ::1: loopback"),
        (["64:ff9b::a9fe:a9fe"], "blocked", "link-local"),
    ],
)
def test_check_address_resolves_names_and_blocks_if_any_address_is_blocked(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    answers: list[str],
    answer: str,
    reason: str,
) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", _resolver({"xn--fa-hia.example": answers}))
    assert main(["url", "check-address", "https://Faß.example/page"]) == 0
    out, err = capsys.readouterr()
    assert out == answer + "\n"
    assert reason in err


def test_check_address_bare_name_and_unresolvable_name(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", _resolver({"a.example": ["192.168.1.1"]}))
    assert main(["url", "check-address", "A.Example."]) == 0
    assert capsys.readouterr().out == "blocked\n"
    assert main(["url", "check-address", "https://nowhere.example/"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "cannot resolve nowhere.example" in err


def test_check_address_does_not_resolve_literals_or_localhost(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", _resolver({}))
    for target in ("http://127.1/", "localhost", "http://a.localhost/", "8.8.8.8", "[2001:db8::1]"):
        assert main(["url", "check-address", target]) == 0
    assert capsys.readouterr().out.split() == [
        "blocked",
        "blocked",
        "blocked",
        "allowed",
        "blocked",
    ]
