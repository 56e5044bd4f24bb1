"""Start ``trawl serve`` as a real process on 127.0.0.1 with ``--port 0``."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

_ADDRESS = re.compile(r"listening on (http://127\.0\.0\.1:(\d+)/)")


@contextmanager
def trawl_serve(
    data: Path,
    *extra: str,
    env: Mapping[str, str] | None = None,
    lines: list[str] | None = None,
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """The base URL of a ``trawl serve`` child, stopped (SIGTERM) when the block ends.

    ``env`` is added to the environment; ``lines`` gets what it printed up to its address.
    """
    proc = subprocess.Popen(
        [sys.executable, "-m", "trawl", "serve", "--data", str(data), "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 30
        url = None
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            if lines is not None:
                lines.append(line)
            match = _ADDRESS.search(line)
            if match:
                url = match.group(1)
        if url is None:
            proc.kill()
            _, err = proc.communicate(timeout=10)
            raise AssertionError(f"trawl serve did not print its address: {err}")
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
