"""``trawl serve`` as a real process: address on stdout, JSON answers, clean stop."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.api.serveproc import trawl_serve


def _get(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_serve_without_an_index(tmp_path: Path) -> None:
    with trawl_serve(tmp_path) as (url, _proc):
        assert url.startswith("http://127.0.0.1:")
        status, headers, body = _get(url + "api/v1/search?query=python")
        assert status == 503
        assert "no search index" in json.loads(body)["error"]
        status, _, body = _get(url + "api/v1/openapi.json")
        assert status == 200
        assert "/api/v1/search" in json.loads(body)["paths"]
        status, _, body = _get(url + "api/v1/search?query=" + "x" * 10_000)
        assert status == 400
        assert "10,000 characters" in json.loads(body)["fields"]["query"]
        status, headers, _ = _get(url)
        assert status == 200
        assert headers["Content-Security-Policy"].startswith("default-src 'self'")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_stops_cleanly_on_a_signal(tmp_path: Path, sig: signal.Signals) -> None:
    with trawl_serve(tmp_path) as (_url, proc):
        proc.send_signal(sig)
        assert proc.wait(timeout=15) == 0
        assert proc.stdout is not None
        assert "stopped" in proc.stdout.read()


def test_a_missing_data_directory_is_made_private(tmp_path: Path) -> None:
    data = tmp_path / "new" / "data"
    lines: list[str] = []
    with trawl_serve(data, lines=lines) as (url, _proc):
        assert data.is_dir() and data.stat().st_mode & 0o777 == 0o700
        assert any("made the data directory" in line for line in lines)
        status, _, body = _get(url + "healthz")
        assert status == 200
        assert json.loads(body) | {"pid": 0} == {
            "status": "ok",
            "pid": 0,
            "search": "no index yet",
            "role": "manager",
            "crawls": 0,
        }
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    cmd = [sys.executable, "-m", "trawl", "serve", "--data", str(blocked / "d"), "--port", "0"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2 and "cannot make the data directory" in done.stderr


def test_port_in_use(tmp_path: Path) -> None:
    with trawl_serve(tmp_path) as (url, _proc):
        port = url.rsplit(":", 1)[1].strip("/")
        cmd = [sys.executable, "-m", "trawl", "serve", "--data", str(tmp_path), "--port", port]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
        assert done.returncode == 2
        assert "cannot listen" in done.stderr


def test_a_bad_allow_network_is_refused(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "trawl", "serve", "--data", str(tmp_path), "--port", "0"]
    done = subprocess.run(
        [*cmd, "--allow-network", "127.0.0.0/33"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert "--allow-network" in done.stderr and "127.0.0.0/33" in done.stderr


def test_another_host_is_refused(tmp_path: Path) -> None:
    with trawl_serve(tmp_path) as (url, _proc):
        port = url.rsplit(":", 1)[1].strip("/")
        for path in ("v1/pages?url=http://a.test/", "v1/crawls", "metrics", "crawls", ""):
            status, _, body = _get(url + path, Host="evil.example")
            assert status == 421, path
            assert "Host" in json.loads(body)["error"]
            status, _, _ = _get(url + path, Host=f"localhost:{port}")
            assert status in (200, 404), path


def test_allowed_hosts_and_the_read_token(tmp_path: Path) -> None:
    lines: list[str] = []
    env = {"TRAWL_ALLOWED_HOSTS": "env.example, .corp.example", "TRAWL_READ_TOKEN": ""}
    args = ("--allowed-host", "search.example", "--require-read-token")
    with trawl_serve(tmp_path, *args, env=env, lines=lines) as (url, _proc):
        printed = [line for line in lines if "read token (shown once" in line]
        assert len(printed) == 1, lines
        token = printed[0].rsplit(" ", 1)[1].strip()
        kept = tmp_path / "read-token"
        assert kept.read_text().strip() == token
        assert kept.stat().st_mode & 0o777 == 0o600
        search = url + "api/v1/search?query=python"
        status, _, body = _get(search)
        assert status == 401
        assert "token" in json.loads(body)["error"]
        assert _get(url + "static/search.css")[0] == 200
        bearer = f"Bearer {token}"
        for host in ("search.example", "env.example:80", "a.corp.example", "localhost"):
            assert _get(search, Host=host, Authorization=bearer)[0] == 503, host  # no index
        assert _get(search, Host="evil.example", Authorization=bearer)[0] == 421
    lines.clear()
    with trawl_serve(tmp_path, "--require-read-token", env=env, lines=lines) as (url, _proc):
        assert not [line for line in lines if "shown once" in line and "read" in line]
        assert _get(url + "v1/crawls", Authorization=f"Bearer {token}")[0] == 200


def test_a_bad_allowed_host_is_refused(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "trawl", "serve", "--data", str(tmp_path), "--port", "0"]
    done = subprocess.run(
        [*cmd, "--allowed-host", "bad name"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert "--allowed-host" in done.stderr and "not a host name: 'bad name'" in done.stderr
