"""Runs commands on a small tmpfs, for the disk-full tests: ``python tmpfs_driver.py PLAN``.

PLAN is a JSON file: ``{"mount": DIR, "results": FILE, "steps": [...]}`` with steps
``["mount", SIZE]``, ``["remount", SIZE]``, ``["fill", NAME]`` (a file taking every
byte left), ``["remove", NAME]``, ``["mkdir", NAME]``, ``["run", NAME, ARGV]`` (its exit status and
stderr are recorded), ``["copy", SRC, DST]`` and ``["umount"]``. The test runs this
script as root in a mount namespace of its own (``unshare -m``) or in a user and
mount namespace (``unshare -rm``): the tmpfs disappears with it, whatever happens.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson


def _fill(path: Path) -> None:
    with open(path, "wb", buffering=0) as f:
        for size in (65536, 4096, 512, 1):  # down to the last byte
            block = b"\0" * size
            try:
                while True:
                    f.write(block)
            except OSError:
                continue


def main(plan_file: str) -> int:
    plan: dict[str, Any] = orjson.loads(Path(plan_file).read_bytes())
    mount = plan["mount"]
    results: dict[str, Any] = {}
    for step in plan["steps"]:
        kind = step[0]
        if kind == "mount":
            tmpfs = ["mount", "-t", "tmpfs", "-o", f"size={step[1]}", "tmpfs", mount]
            subprocess.run(tmpfs, check=True)
        elif kind == "remount":
            subprocess.run(["mount", "-o", f"remount,size={step[1]}", mount], check=True)
        elif kind == "fill":
            _fill(Path(mount) / step[1])
        elif kind == "run":
            done = subprocess.run(step[2], capture_output=True, text=True, timeout=300)
            results[step[1]] = {"rc": done.returncode, "stderr": done.stderr}
        elif kind == "mkdir":
            (Path(mount) / step[1]).mkdir()
        elif kind == "remove":
            (Path(mount) / step[1]).unlink()
        elif kind == "copy":
            shutil.copytree(step[1], step[2], symlinks=True)
        elif kind == "umount":
            subprocess.run(["umount", mount], check=True)
        Path(plan["results"]).write_bytes(orjson.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
