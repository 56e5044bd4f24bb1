"""A full disk, for real: the real ``trawl crawl`` on a small tmpfs.

The crawl fills the disk and must stop with one clear line and exit status 75 (no
traceback, no unclosed HTTP session), stop the same way when started again on the
still-full disk, and, given space, resume to the end. The free-space reserve must
stop it before the disk is full, and a crawl started without space must say so.
Each resumed crawl is compared with an uninterrupted one, as the kill -9 test does:
the same URL states, each text stored once, the index holding each stored page
once, valid WARC files.

Mounting needs root (in a mount namespace of its own, ``unshare -m``, so nothing is
left mounted whatever happens) or an unprivileged user namespace (``unshare -rm``).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.integration.crawlkit import assert_same_states, assert_same_texts_and_events
from tests.integration.test_kill9 import _events, _index_urls, _outcomes, _stored_urls, _texts
from trawl.testing.sampleweb import SampleWeb, SampleWebServer

TRAWL = str(Path(sys.executable).with_name("trawl"))
WARCIO = str(Path(sys.executable).with_name("warcio"))
DRIVER = str(Path(__file__).with_name("tmpfs_driver.py"))
EXIT_DISK_FULL = 75
SUFFIX = "; free space and run the same command again to resume"
FULL_LINE = re.compile(
    r"trawl crawl: disk full writing (?P<path>/\S+) \((?P<free>[\d.]+ [KMG]?B) free on "
    r"(?P<mount>/\S+)\)" + re.escape(SUFFIX)
)
LOW_LINE = re.compile(
    r"trawl crawl: low disk space for (?P<path>/\S+): (?P<free>[\d.]+ [KMG]?B) free on "
    r"(?P<mount>/\S+), less than the (?P<reserve>[\d.]+ [KMG]?B) reserve \(min_free_space\)"
    + re.escape(SUFFIX)
)


def _namespace(tmp: Path) -> tuple[list[str] | None, str]:
    """The prefix that lets the driver mount a tmpfs here, or None and why not."""
    probe_dir = tmp / "probe"
    probe_dir.mkdir()
    plan = tmp / "probe.json"
    plan.write_bytes(
        orjson.dumps(
            {
                "mount": str(probe_dir),
                "results": str(tmp / "probe-results.json"),
                "steps": [["mount", "1M"], ["umount"]],
            }
        )
    )
    tried = []
    for prefix in (["unshare", "-m"], ["unshare", "-rm"]):
        if shutil.which(prefix[0]) is None:
            tried.append(f"{prefix[0]} not installed")
            break
        done = subprocess.run(
            [*prefix, sys.executable, DRIVER, str(plan)], capture_output=True, text=True
        )
        if done.returncode == 0:
            return prefix, ""
        tried.append(f"{' '.join(prefix)}: {done.stderr.strip().splitlines()[-1:]}")
    return None, "cannot mount a tmpfs (" + "; ".join(tried) + ")"


def _command(srv: SampleWebServer, web: SampleWeb, data: Path, hosts: list[str]) -> list[str]:
    cmd = [TRAWL, "crawl", "--data", str(data), "--quiet", "--delay", "0.02"]
    cmd += ["--allow-network", "127.0.0.0/8", "--scope", "allowlist", "--parse-workers", "1"]
    for host in hosts:
        cmd += ["--allow-host", host, "--resolve", f"{host}=127.0.0.1"]
    return cmd + [web.url(h, "/", port=srv.port) for h in hosts]


async def _drive(prefix: list[str], tmp: Path, mount: Path, steps: list[Any]) -> dict[str, Any]:
    plan = tmp / "plan.json"
    results = tmp / "results.json"
    plan.write_bytes(orjson.dumps({"mount": str(mount), "results": str(results), "steps": steps}))
    proc = await asyncio.create_subprocess_exec(
        *prefix, sys.executable, DRIVER, str(plan), stderr=subprocess.PIPE
    )
    _out, err = await asyncio.wait_for(proc.communicate(), 600)
    assert proc.returncode == 0, err.decode()
    found: dict[str, Any] = orjson.loads(results.read_bytes())
    return found


def _one_clean_line(result: dict[str, Any], pattern: re.Pattern[str]) -> re.Match[str]:
    err = result["stderr"]
    assert result["rc"] == EXIT_DISK_FULL, err
    for noise in ("Traceback", "Unclosed", "Exception", "Error:", "panicked", "Task was"):
        assert noise not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    record = orjson.loads(lines[0])  # not a terminal: a JSON log line
    assert record["level"] == "error", record
    match = pattern.fullmatch(record["message"])
    assert match is not None, record
    return match


async def _check_like_reference(data: Path, reference: Path, web: SampleWeb) -> None:
    """What test_kill9 checks after its kills: nothing lost, nothing twice."""
    assert_same_states(_outcomes(data), _outcomes(reference), web)
    got_texts, events = _texts(data), _events(data)
    assert [e["id"] for e in events] == list(range(1, len(events) + 1))
    assert_same_texts_and_events((got_texts, events), (_texts(reference), _events(reference)), web)
    indexed = _index_urls(data)
    assert len(indexed) == len(set(indexed)), "a page was indexed twice"
    assert sorted(indexed) == sorted(_stored_urls(data))
    assert len(indexed) == len(got_texts)
    for f in sorted((data / "warc").glob("*.warc.gz")):
        check = await asyncio.create_subprocess_exec(
            WARCIO, "check", str(f), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        out, _ = await check.communicate()
        assert check.returncode == 0, out.decode()


async def test_a_full_disk_stops_the_crawl_cleanly_and_it_resumes(tmp_path: Path) -> None:
    prefix, why = _namespace(tmp_path)
    if prefix is None:
        pytest.skip(why)
    web = SampleWeb(hosts=8, pages_per_host=60, seed=3)
    hosts = [h for i, h in enumerate(web.hosts) if i != 1][:7]  # no Crawl-delay host
    mount = tmp_path / "disk"
    mount.mkdir()
    async with SampleWebServer(web) as srv:
        reference = tmp_path / "reference"
        proc = await asyncio.create_subprocess_exec(
            *_command(srv, web, reference, hosts), stderr=subprocess.PIPE
        )
        _out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()

        full = [*_command(srv, web, mount / "full", hosts), "--min-free-space", "0"]
        low = [*_command(srv, web, mount / "low", hosts), "--min-free-space", "32M"]
        fresh = _command(srv, web, mount / "fresh", hosts)
        # Only the index on the small disk: it is tantivy that finds it full.
        index_full = tmp_path / "index-full"
        index_full.mkdir()
        (index_full / "index").symlink_to(mount / "index")
        index_cmd = [*_command(srv, web, index_full, hosts), "--min-free-space", "0"]
        steps: list[Any] = [
            # The disk fills mid-crawl (the whole crawl writes some 32 MB); the same
            # command again, on the still full disk; then with space, to the end.
            ["mount", "12M"],
            ["run", "full", full],
            ["run", "still full", _command(srv, web, mount / "full", hosts)],
            ["remount", "256M"],
            ["run", "resumed", _command(srv, web, mount / "full", hosts)],
            ["copy", str(mount / "full"), str(tmp_path / "full")],
            ["umount"],
            # The reserve stops the crawl while there is still room; with more, on. It is
            # crossed a third of the way (8 MB written): a crawl that ends in 3 s must
            # still meet it at one of its commits' checks (every 0.5 s).
            ["mount", "40M"],
            ["run", "low", low],
            ["remount", "256M"],
            ["run", "low resumed", _command(srv, web, mount / "low", hosts)],
            ["copy", str(mount / "low"), str(tmp_path / "low")],
            ["umount"],
            # No space at all to start with; then below the default reserve; then on.
            ["mount", "4M"],
            ["fill", "junk"],
            ["run", "no space", [*fresh, "--min-free-space", "0"]],
            ["run", "below reserve", fresh],
            ["remove", "junk"],
            ["remount", "64M"],
            ["run", "fresh resumed", [*fresh, "--min-free-space", "0"]],
            ["copy", str(mount / "fresh"), str(tmp_path / "fresh")],
            ["umount"],
            ["mount", "3M"],
            ["mkdir", "index"],
            ["run", "index full", index_cmd],
            ["run", "rebuild", [TRAWL, "index", "--data", str(index_full), "--quiet"]],
            ["remount", "256M"],
            ["run", "index resumed", _command(srv, web, index_full, hosts)],
            ["copy", str(mount / "index"), str(tmp_path / "index-copy")],
            ["umount"],
        ]
        results = await _drive(prefix, tmp_path, mount, steps)

    for name, result in results.items():
        print(f"{name}: exit {result['rc']}: {result['stderr'].strip()[:300]}")
    first = _one_clean_line(results["full"], FULL_LINE)
    assert first["path"].startswith(str(mount / "full"))
    assert first["mount"] == str(mount)
    again = _one_clean_line(results["still full"], FULL_LINE)
    assert again["path"].startswith(str(mount / "full"))
    for name in ("resumed", "low resumed", "fresh resumed", "index resumed"):
        assert results[name]["rc"] == 0, results[name]["stderr"]
        assert "Traceback" not in results[name]["stderr"]
    await _check_like_reference(tmp_path / "full", reference, web)

    stop = _one_clean_line(results["low"], LOW_LINE)
    assert stop["reserve"] == "32.0 MB"
    assert stop["mount"] == str(mount)
    await _check_like_reference(tmp_path / "low", reference, web)

    empty = _one_clean_line(results["no space"], FULL_LINE)
    assert empty["path"].startswith(str(mount / "fresh"))
    below = _one_clean_line(results["below reserve"], LOW_LINE)
    assert below["reserve"] == "256.0 MB"
    await _check_like_reference(tmp_path / "fresh", reference, web)

    index = _one_clean_line(results["index full"], FULL_LINE)
    assert index["path"] == str(index_full / "index")
    assert index["mount"] == str(mount)
    # `trawl index` on the full disk: one line too (its usage errors' status, 2).
    rebuild = results["rebuild"]
    assert rebuild["rc"] == 2, rebuild["stderr"]
    assert rebuild["stderr"].startswith(f"trawl index: disk full writing {index_full}")
    assert len(rebuild["stderr"].strip().splitlines()) == 1, rebuild["stderr"]
    (index_full / "index").unlink()
    (tmp_path / "index-copy").rename(index_full / "index")
    await _check_like_reference(index_full, reference, web)
