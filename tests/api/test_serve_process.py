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


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
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


def test_missing_data_directory(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "trawl", "serve", "--data", str(tmp_path / "nope"), "--port", "0"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2
    assert "no data directory" in done.stderr


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
