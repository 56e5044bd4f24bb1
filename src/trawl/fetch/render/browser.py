"""Headless Chromium for rendering: launched through Playwright, with no network of its
own, and never outliving the crawl.

- Playwright is the ``render`` extra (``pip install 'trawl[render]'``), imported only
  when a browser is launched; without it ``require_playwright`` says what to install.
- The browser reaches nothing by itself: every request is routed to the crawler
  (``fetch/render/page.py``), and one that escaped the routing meets
  ``--proxy-server=127.0.0.1:9`` (the discard port: the connection is refused)
  with loopback proxied too (``<-loopback>``) and no name resolution of its own
  (``MAP * ~NOTFOUND``); WebRTC may use no unproxied UDP, and QUIC is off.
- Popups are refused (``--block-new-web-contents``); the profile is a new empty one
  per launch (Playwright's temporary ``--user-data-dir``), removed at close.
  The wrapper notes its path and gives Chromium its own folder as TMPDIR, so a
  browser that crashed or was killed, or a crawl killed with its driver, leaves
  nothing in the temporary directory once the browser is closed or the next
  launch sweeps (each was some 1.2 MB left behind: a page that crashes Chromium
  again and again would fill the disk).
- Chromium is started by a small wrapper script that sets ``PR_SET_PDEATHSIG``
  (SIGKILL) and writes its process id before it execs the browser: Playwright's
  driver is the browser's parent and exits when the crawl's process dies (its pipe
  closes), so a kill -9 of the crawl, or of the driver too, leaves no Chromium
  behind. The process id gives the pool the browser's memory (the PSS of its
  processes) and lets it kill a hung browser's whole group.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from trawl.errors import ConfigError

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

__all__ = [
    "BASE_FLAGS",
    "CHROMIUM_FLAGS",
    "Launched",
    "find_browser",
    "launch",
    "require_playwright",
]

DEBIAN_CHROMIUM: Final = Path("/usr/bin/chromium")
_PREFIX: Final = "trawl-browser-"
# Headless, and nothing the browser would fetch for itself (updates, sync, QUIC).
BASE_FLAGS: Final = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
CHROMIUM_FLAGS: Final = (
    *BASE_FLAGS,
    "--disable-dev-shm-usage",
    "--block-new-web-contents",
    "--proxy-server=127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
)
_WRAPPER: Final = """#!{python} -I
import ctypes, os, sys
if sys.platform.startswith("linux"):
    ctypes.CDLL(None, use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
for arg in sys.argv[1:]:
    if arg.startswith("--user-data-dir="):
        with open({profilefile!r}, "w") as f:
            f.write(arg.partition("=")[2])
if {own_tmp!r}:
    os.environ["TMPDIR"] = {folder!r}
with open({pidfile!r}, "w") as f:
    f.write(str(os.getpid()))
os.execv({browser!r}, [{browser!r}, *sys.argv[1:]])
"""
# The profile Playwright's driver makes for each launch (in its temporary directory):
# its driver removes it when the browser exits while it watches, but not when the
# driver itself is killed with the crawl, nor always after a browser it saw crash.
_PROFILE_PREFIX: Final = "playwright_chromiumdev_profile-"
# Chromium puts its singleton socket in $TMPDIR/org.chromium.Chromium.XXXXXX (left
# behind by a browser killed with SIGKILL); in the wrapper's folder while the path fits
# a Unix socket's 108 bytes.
_OWN_TMP_WITHIN: Final = 60


def require_playwright() -> None:
    """Raise a ConfigError saying what to install when Playwright is missing."""
    try:
        import playwright.async_api  # noqa: F401
        import psutil  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        raise ConfigError(
            "rendering pages needs Playwright: pip install 'trawl[render]' "
            "(and a Chromium: Debian's chromium package, or `playwright install chromium`)"
        ) from None


def find_browser(configured: str = "") -> str | None:
    """The Chromium to launch: the configured one, Debian's, or None (Playwright's own)."""
    if configured:
        path = shutil.which(configured) or configured
        if not Path(path).exists():
            raise ConfigError(f"render_browser {configured!r} does not exist")
        return path
    return str(DEBIAN_CHROMIUM) if DEBIAN_CHROMIUM.exists() else None


@dataclass(slots=True)
class Launched:
    """One running browser, its driver, and where its wrapper lives."""

    playwright: Playwright
    browser: Browser
    folder: Path  # the wrapper, its pid file, the profile's path, Chromium's TMPDIR
    pid: int | None  # the browser process (leader of its own process group)
    version: str
    alive: bool = True
    active: int = 0  # pages open in it
    retired: bool = False  # no new pages: closed when the last one ends
    closed: bool = False
    memory_checked_at: float = float("-inf")  # time.monotonic() of the last look

    def memory(self) -> int:
        """Memory of the browser's processes, in bytes: the sum of their proportional
        set sizes (PSS: a page shared by n processes counts 1/n in each), so the
        Chromium binary and its libraries, mapped by every process, count once. The sum
        of their RSS would count them in each (about three times the truth with two
        pages open). RSS where PSS cannot be read (not Linux). Reads /proc: call it off
        the event loop."""
        if self.pid is None:
            return 0
        import psutil

        total = 0
        try:
            leader = psutil.Process(self.pid)
            procs = [leader, *leader.children(recursive=True)]
        except psutil.Error:
            return 0
        for proc in procs:
            try:
                total += _pss(proc.pid)
            except OSError:
                with contextlib.suppress(psutil.Error):
                    total += proc.memory_info().rss
        return total

    def kill(self) -> None:
        """SIGKILL the browser's process group (a hung or crashed browser's leftovers)."""
        self.alive = False
        pid = self.pid
        if pid is None:
            return
        with contextlib.suppress(OSError):
            # Only a group the browser leads, never our own.
            if os.getpgid(pid) == pid and pid != os.getpgid(0):
                os.killpg(pid, signal.SIGKILL)

    async def close(self) -> None:
        """Close the browser and its driver; kill what is left; remove the wrapper."""
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(Exception):
            await self.browser.close()
        self.kill()
        with contextlib.suppress(Exception):
            await self.playwright.stop()
        _remove(self.folder)


def _remove(folder: Path) -> None:
    """Remove a gone browser's wrapper folder and the profile it was started with."""
    with contextlib.suppress(OSError, ValueError):
        profile = Path((folder / "profile").read_text())
        # Only what Playwright's driver names a profile: the file is ours, the path
        # could be anything if it was not.
        if profile.name.startswith(_PROFILE_PREFIX) and profile.is_absolute():
            shutil.rmtree(profile, ignore_errors=True)
    shutil.rmtree(folder, ignore_errors=True)


def _sweep(tmp: Path) -> None:
    """Remove the wrapper folders (and profiles) of browsers that are gone (a crawl
    killed with SIGKILL cannot remove its own); a folder whose browser lives is left
    alone."""
    for folder in tmp.glob(f"{_PREFIX}*"):
        try:
            pid = int((folder / "pid").read_text())
            os.kill(pid, 0)
        except ProcessLookupError:
            _remove(folder)
        except (OSError, ValueError):
            continue  # being started (no pid yet), or not ours to judge


def _pss(pid: int) -> int:
    with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
        for line in f:
            if line.startswith(b"Pss:"):
                return int(line.split()[1]) * 1024
    raise OSError(f"no Pss in /proc/{pid}/smaps_rollup")


async def launch(executable: str | None, *, start_within: float = 30.0) -> Launched:
    """Start a driver and a browser (see the module docstring for how)."""
    require_playwright()
    from playwright.async_api import async_playwright

    _sweep(Path(tempfile.gettempdir()))
    folder = Path(tempfile.mkdtemp(prefix=_PREFIX))
    pidfile = folder / "pid"
    options: dict[str, Any] = {
        "args": list(CHROMIUM_FLAGS),
        "headless": True,
        "handle_sigint": False,
        "handle_sigterm": False,
        "handle_sighup": False,
        "timeout": start_within * 1000,
    }
    if executable is not None:
        wrapper = folder / "chromium"
        wrapper.write_text(
            _WRAPPER.format(
                python=sys.executable,
                pidfile=str(pidfile),
                profilefile=str(folder / "profile"),
                folder=str(folder),
                own_tmp=len(str(folder)) <= _OWN_TMP_WITHIN,
                browser=executable,
            )
        )
        wrapper.chmod(0o700)
        options["executable_path"] = str(wrapper)
    pw = await async_playwright().start()
    try:
        browser = await pw.chromium.launch(**options)
    except BaseException:
        with contextlib.suppress(Exception):
            await pw.stop()
        _remove(folder)
        raise
    try:
        pid: int | None = int(pidfile.read_text())
    except (OSError, ValueError):
        pid = None  # Playwright's own browser: no wrapper, no pid
    launched = Launched(pw, browser, folder, pid, f"Chromium/{browser.version}")

    def gone(_browser: Browser) -> None:
        launched.alive = False

    browser.on("disconnected", gone)
    return launched
