"""The real ``trawl crawl`` and ``trawl stats`` commands against the test web."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import orjson
import psutil  # type: ignore[import-untyped]

from tests.testweb import TestWeb
from trawl.stats import url_states

TRAWL = str(Path(sys.executable).with_name("trawl"))


async def trawl(*args: str, limit: float = 120) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        TRAWL, *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), limit)
    return proc.returncode or 0, out.decode(), err.decode()


async def requests_seen(web: TestWeb, host: str, n: int) -> None:
    """Wait until the server has seen ``n`` requests for ``host`` (it has no event for it)."""
    while web.log.count(host) < n:  # noqa: ASYNC110 - polling another process's effect
        await asyncio.sleep(0.05)


def _net(web: TestWeb, tmp: Path) -> list[str]:
    resolve = tmp / "resolve.txt"
    resolve.write_text("".join(f"{h}={ip}\n" for h, ip in web.resolve_map().items()))
    return ["--allow-network", "127.0.0.0/8", "--resolve-file", str(resolve)]


async def test_crawl_limits_resume_and_stats(tmp_path: Path) -> None:
    async with TestWeb() as web:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text(f"# the baseline\n{web.url('books.test')}\n{web.url('news.test')}\n")
        data = tmp_path / "data"
        common = [*_net(web, tmp_path), "--delay", "0.02", "--parse-workers", "0"]
        rc, out, err = await trawl(
            "crawl",
            "--seeds",
            str(seeds),
            "--data",
            str(data),
            "--max-pages",
            "10",
            *common,
            "--progress-interval",
            "0.1",
        )
        assert rc == 0, err
        # Not a terminal: every line on stderr is a JSON log record, like trawl serve's.
        records = [orjson.loads(line) for line in err.splitlines()]
        progress = [r for r in records if r["message"] == "progress"]
        assert progress and {"known", "fetched", "pages_per_second"} <= set(progress[0])
        end = records[-1]
        assert end["message"] == "crawl max pages" and end["stopped"] == "max pages"
        assert end["level"] == "info" and end["logger"] == "trawl.crawl"
        assert end["fetched"] == 10 and "failed_by_reason" in end
        assert (data / "warc").is_dir()
        parsed = [u for u, (s, _r) in url_states(data).items() if s == "parsed"]
        assert len(parsed) == 10

        # The same data directory again, no seeds: the crawl goes on to the end.
        more = ["--max-pages", "1000", "--quiet"]
        rc, out, err = await trawl("crawl", "--resume", str(data), *common, *more)
        assert rc == 0, err
        assert "crawl done" in err
        states = url_states(data)
        assert len([s for s, _ in states.values() if s == "parsed"]) == 58
        assert web.log.count("books.test", "/robots.txt") == 1  # cached across the restart

        rc, out, err = await trawl("stats", "--data", str(data), "--json")
        assert rc == 0, err
        stats = orjson.loads(out)
        assert stats["urls"]["parsed"] == 58
        assert stats["documents"] == 58
        rc, out, _ = await trawl("stats", "--data", str(data), "--urls", "parsed")
        assert len(out.splitlines()) == 58
        assert out.splitlines()[0].startswith("parsed\tstored\thttp://")


async def test_ctrl_c_stops_cleanly_and_the_crawl_resumes(tmp_path: Path) -> None:
    async with TestWeb() as web:
        data = tmp_path / "data"
        cmd = [TRAWL, "crawl", web.url("books.test"), "--data", str(data), *_net(web, tmp_path)]
        cmd += ["--delay", "0.2", "--parse-workers", "1", "--quiet"]
        proc = await asyncio.create_subprocess_exec(
            *cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        await requests_seen(web, "books.test", 5)  # started and crawling
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _out, errb = await asyncio.wait_for(proc.communicate(), 30)
        err = errb.decode()
        assert proc.returncode == 130, err
        assert time.monotonic() - started < 10
        assert "stopping" in err
        assert "crawl interrupted" in err
        assert "Traceback" not in err
        states = url_states(data)
        assert "in flight" not in {s for s, _ in states.values()}
        done_before = sum(s == "parsed" for s, _ in states.values())
        assert 0 < done_before < 38

        # Twice: abort at once, still losing nothing.
        proc = await asyncio.create_subprocess_exec(
            *cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        await requests_seen(web, "books.test", web.log.count("books.test") + 3)
        proc.send_signal(signal.SIGINT)
        await asyncio.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _out, errb = await asyncio.wait_for(proc.communicate(), 30)
        # A fast stop can finish before the second signal lands; it then meets the
        # interpreter's own exit, which dies of SIGINT (a shell shows 130 either way).
        assert proc.returncode in (130, -signal.SIGINT), errb.decode()
        assert "crawl interrupted" in errb.decode()

        resume = ["crawl", "--resume", str(data), *_net(web, tmp_path), "--delay", "0.02"]
        rc, _stdout, err2 = await trawl(*resume, "--quiet", limit=120)
        assert rc == 0, err2
        states = url_states(data)
        assert sum(s == "parsed" for s, _ in states.values()) == 38
        paths = [r.target for r in web.log.requests_for("books.test") if r.target != "/robots.txt"]
        # At most the pages in flight at an abort were fetched twice.
        assert len(paths) - len(set(paths)) <= 2


async def test_bad_arguments_exit_2_with_a_message(tmp_path: Path) -> None:
    rc, _out, err = await trawl("crawl", "http://a.test/")
    assert rc == 2
    assert "--data" in err
    rc, _out, err = await trawl("crawl", "--data", str(tmp_path / "new"))
    assert rc == 2
    assert "no seeds" in err
    rc, _out, err = await trawl(
        "crawl", "http://a.test/", "--data", str(tmp_path), "--resolve", "x"
    )
    assert rc == 2
    assert "HOST=IP" in err
    rc, _out, err = await trawl("crawl", "http://a.test/", "--data", str(tmp_path), "--delay", "-1")
    assert rc == 2
    assert "delay" in err
    rc, _out, err = await trawl("stats", "--data", str(tmp_path / "nothing"))
    assert rc == 2
    assert "no crawl" in err


async def test_ctrl_c_at_a_terminal_prints_no_traceback_from_parse_workers(
    tmp_path: Path,
) -> None:
    """A terminal sends SIGINT to the whole foreground process group, parse workers too."""
    async with TestWeb() as web:
        data = tmp_path / "data"
        cmd = [TRAWL, "crawl", web.url("books.test"), "--data", str(data), *_net(web, tmp_path)]
        cmd += ["--delay", "0.1", "--parse-workers", "2", "--quiet"]
        # A session of its own: the crawler leads a process group, as a shell's job does.
        proc = await asyncio.create_subprocess_exec(
            *cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
        )
        await requests_seen(web, "books.test", 8)  # pages parsed: the workers are up
        workers = [
            p for p in psutil.Process(proc.pid).children(recursive=True) if p.pid != proc.pid
        ]
        assert workers, "no parse worker processes to signal"
        os.killpg(proc.pid, signal.SIGINT)
        _out, errb = await asyncio.wait_for(proc.communicate(), 30)
        err = errb.decode()
        assert proc.returncode == 130, err
        assert "crawl interrupted" in err
        assert "Traceback" not in err
        assert "KeyboardInterrupt" not in err


async def test_stats_urls_prints_one_line_per_url_whatever_the_reasons(tmp_path: Path) -> None:
    async with TestWeb() as web:
        data = tmp_path / "data"
        common = [*_net(web, tmp_path), "--delay", "0.02", "--parse-workers", "0", "--quiet"]
        seed = web.url("redirects.test")
        rc, _out, err = await trawl("crawl", seed, "--data", str(data), *common)
        assert rc == 0, err
    states = url_states(data)
    assert states[web.url("redirects.test", "/loop/a")] == ("failed", "redirect loop")
    assert states[web.url("redirects.test", "/self")] == ("failed", "redirect loop")
    # A data directory written before reasons were made single-line (or by hand).
    conn = sqlite3.connect(data / "state.db")
    with conn:
        conn.execute(
            "UPDATE urls SET reason=? WHERE url=?",
            ("bad\nstatus\tline\r\x1b[31m", web.url("redirects.test", "/to-ftp")),
        )
    conn.close()
    rc, out, err = await trawl("stats", "--data", str(data), "--urls")
    assert rc == 0, err
    lines = out.splitlines()
    assert len(lines) == len(states)
    assert all(len(line.split("\t")) == 3 for line in lines)
    (bad,) = [line for line in lines if line.endswith("/to-ftp")]
    assert bad.split("\t")[1] == "bad\\nstatus\\tline\\r\\x1b[31m"
