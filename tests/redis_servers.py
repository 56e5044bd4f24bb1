"""Real redis-server processes on loopback ports, for the contract suites and fault drills.

``RedisServer`` is one process; ``RedisCluster`` is 3 primaries with a replica each
(6 processes, ``redis-cli --cluster create``). Each has its own directory, binds
127.0.0.1 only, never snapshots (``--save ''``) and keeps an append-only file with
``appendfsync everysec``, the production setting we recommend (an fsync a second: a
whole-machine crash loses at most about a second of writes; a process crash nothing).
``kill_primary`` kills -9 one primary and waits until its replica took over.

Parallel test processes (pytest-xdist workers) each start their own servers: a port is
free when chosen but another process may take it before redis-server binds it, so a
server counts as up only when the process answering on its port is its own (``INFO``
``process_id``), and one whose port was taken is started again on another.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import redis

SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 and whose cluster bus port (+10000) is free too."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port + 10000 > 65535:
            continue
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port


class ServerExitedError(RuntimeError):
    """The redis-server process ended while starting (its port was taken, most likely)."""


def _wait(check: object, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():  # type: ignore[operator]
                return
        except ServerExitedError:
            raise
        except Exception:
            pass
        time.sleep(0.05)
    raise TimeoutError(f"timed out waiting for {what}")


class RedisServer:
    """One redis-server on a free loopback port, in its own directory."""

    def __init__(
        self, directory: Path, *, cluster: bool = False, appendfsync: str = "everysec"
    ) -> None:
        """``appendfsync``: ``everysec`` (recommended), ``always``, or ``off`` (no AOF)."""
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self._cluster = cluster
        self._appendfsync = appendfsync
        for attempt in range(5):
            self.port = free_port()
            try:
                self.start()
                break
            except ServerExitedError:
                if attempt == 4:
                    raise

    def _args(self) -> list[str]:
        appendfsync = self._appendfsync
        args = [
            SERVER,
            "--bind", "127.0.0.1",
            "--port", str(self.port),
            "--dir", str(self.dir),
            "--save", "",
            "--appendonly", "no" if appendfsync == "off" else "yes",
            "--appendfsync", "everysec" if appendfsync == "off" else appendfsync,
            "--protected-mode", "yes",
            "--logfile", "redis.log",
        ]  # fmt: skip
        if self._cluster:
            args += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
            args += ["--cluster-node-timeout", "1000"]
        return args

    def start(self) -> None:
        """Start (again, after a kill: same port, same directory, its files as left)."""
        self.process = subprocess.Popen(
            self._args(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        _wait(self._serving, f"redis-server on port {self.port}")

    def _serving(self) -> bool:
        """Up, and it is this process that answers on the port (not another one's)."""
        if self.process.poll() is not None:
            raise ServerExitedError(f"redis-server on port {self.port} exited")
        with redis.Redis(port=self.port, socket_timeout=1) as c:
            return int(c.info("server")["process_id"]) == self.process.pid

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def kill(self) -> None:
        """kill -9, as a machine dying would."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


class RedisCluster:
    """3 primaries and 3 replicas on loopback, ready when ``cluster_state:ok``."""

    def __init__(self, directory: Path, *, primaries: int = 3) -> None:
        self.nodes = [
            RedisServer(directory / f"node{i}", cluster=True) for i in range(primaries * 2)
        ]
        try:
            subprocess.run(
                [CLI, "--cluster", "create"]
                + [f"127.0.0.1:{n.port}" for n in self.nodes]
                + ["--cluster-replicas", "1", "--cluster-yes"],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=60,
            )
            _wait(self.healthy, "cluster_state:ok")
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        """The cluster through a live node (the client learns the others from it)."""
        live = next(n for n in self.nodes if n.process.poll() is None)
        return f"redis+cluster://127.0.0.1:{live.port}/0"

    def _info(self, node: RedisServer, section: str) -> dict[str, str]:
        with redis.Redis(port=node.port, socket_timeout=1, decode_responses=True) as c:
            if section == "cluster":
                text = str(c.execute_command("CLUSTER", "INFO"))
                return dict(line.split(":", 1) for line in text.split() if ":" in line)
            return {k: str(v) for k, v in c.info(section).items()}

    def healthy(self) -> bool:
        """Every live node says the cluster is ok and sees as many primaries as it has slots."""
        live = [n for n in self.nodes if n.process.poll() is None]
        return all(self._info(n, "cluster").get("cluster_state") == "ok" for n in live)

    def primaries(self) -> list[RedisServer]:
        out = []
        for n in self.nodes:
            if n.process.poll() is None:
                with contextlib.suppress(Exception):
                    if self._info(n, "replication").get("role") == "master":
                        out.append(n)
        return out

    def kill_primary(self, index: int = 0, timeout: float = 30.0) -> RedisServer:
        """kill -9 a primary; returns once its replica was promoted and the cluster is ok."""
        victim = self.primaries()[index]
        victim.kill()

        def promoted() -> bool:
            return len(self.primaries()) == 3 and self.healthy()

        _wait(promoted, "a replica to take over", timeout)
        return victim

    def rejoin(self, node: RedisServer, timeout: float = 30.0) -> None:
        """Start a killed node again; returns once it serves as a replica, in sync."""
        node.start()

        def replica() -> bool:
            info = self._info(node, "replication")
            return info.get("role") == "slave" and info.get("master_link_status") == "up"

        _wait(replica, "the old primary to come back as a replica", timeout)

    def stop(self) -> None:
        for n in self.nodes:
            n.stop()
