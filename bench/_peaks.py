"""What a process was doing when its memory reached a new high: ``bench_memory.py
--peaks DIR``.

The peak RSS of a crawl is set by short swings (tens of MB for a fraction of a
second), which a sample every 0.2 s shows but cannot name. ``PeakWatch`` is fed the
sampler's readings of one process; each time its anonymous RSS passes its highest so
far by ``step`` (after ``after`` seconds: the start-up's climb is not what is asked),
it takes ``py-spy dump --nonblocking`` of the process (its Python threads' stacks,
the process not paused) and writes it to ``DIR/<label>-peak-NNN.txt``. The summary
counts, over those highs, what each busy thread was in: its innermost trawl frame
(the index's commit, a parse result applied ...). Native threads (tantivy's) are not
in a Python dump: a high with no busy Python thread but the event loop points at them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

MIB = 1 << 20
_COMMAND = re.compile(r"trawl/(cli/|__main__)")  # the command line's frames, under all
# Where a thread waits for work, not in it: a worker thread's queue, an event's or a
# condition's wait (the tickers), the DNS resolver's shutdown loop.
_PARKED = ("_worker (", "Condition.wait (", "Event.wait (", "_ChannelShutdownManager.")
_THREAD = re.compile(r'^Thread (\d+) \(([^)]*)\): "([^"]*)"')


def _pyspy() -> str | None:
    here = Path(sys.executable).with_name("py-spy")
    return str(here) if here.exists() else shutil.which("py-spy")


def busy_frames(dump: str) -> list[str]:
    """Each thread of a py-spy dump that is at work, as ``thread: frame`` (its
    innermost frame in trawl's code below the command line's, else its innermost).
    py-spy calls a thread idle when it waits outside Python, as the index batch's does
    in tantivy's commit: such a thread counts (``, waiting``) unless it is parked (an
    executor's queue, a ticker's or a lock's wait)."""
    out: list[str] = []
    name: str | None = None
    idle = False
    frames: list[str] = []

    def flush() -> None:
        if name is None or not frames or (idle and frames[0].startswith(_PARKED)):
            return
        ours = [f for f in frames if "trawl/" in f and not _COMMAND.search(f)]
        if not ours and name != "event loop":
            return
        # No trawl frame under the command's: the loop in asyncio's own code (its
        # selector, a callback's dispatch), where native threads set the high.
        where = ours[0] if ours else "in asyncio: " + frames[0]
        out.append(f"{name}: {where}{', waiting' if idle else ''}")

    for line in dump.splitlines():
        m = _THREAD.match(line)
        if m:
            flush()
            name, idle, frames = _kind(m.group(3)), "idle" in m.group(2), []
        elif name is not None and line.startswith("    "):
            frames.append(line.strip())
    flush()
    return out


def _kind(thread: str) -> str:
    if thread == "MainThread":
        return "event loop"
    if thread.startswith("asyncio_"):
        return "executor"  # the loop's worker threads: the index batch, commits' fsyncs
    return thread


@dataclass
class PeakWatch:
    """Dumps one process's Python stacks at each new high of its anonymous RSS."""

    pid: int
    out: Path
    label: str
    after: float = 10.0
    step: int = MIB
    highs: list[tuple[float, int, list[str]]] = field(default_factory=list)  # (s, anon, busy)
    _best: int = 0
    _spy: str | None = field(default_factory=_pyspy)

    def sample(self, seconds: float, anon: int) -> None:
        if seconds < self.after or anon < self._best + self.step or self._spy is None:
            return
        self._best = anon
        try:
            dump = subprocess.run(
                [self._spy, "dump", "--nonblocking", "--pid", str(self.pid)],
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            ).stdout
        except subprocess.TimeoutExpired:
            dump = ""
        dump = dump[dump.find("\nThread ") + 1 :] if "\nThread " in dump else dump
        self.highs.append((seconds, anon, busy_frames(dump)))
        n = len(self.highs)
        self.out.mkdir(parents=True, exist_ok=True)
        head = f"{self.label}: high {n} at {seconds:.1f} s, anonymous RSS {anon / 1e6:.1f} MB\n"
        (self.out / f"{self.label}-peak-{n:03d}.txt").write_text(head + dump)

    def summary(self, top: int = 6) -> str:
        if self._spy is None:
            return "peaks: py-spy not found (pip install -e '.[bench]')"
        if not self.highs:
            return f"peaks: no new high of the anonymous RSS after {self.after:.0f} s"
        counts = Counter(f for _, _, busy in self.highs for f in busy)
        last_s, last_anon, _ = self.highs[-1]
        lines = [
            f"peaks: {len(self.highs)} new highs of the anonymous RSS after {self.after:.0f} s "
            f"(the last {last_anon / 1e6:.0f} MB at {last_s:.0f} s; dumps in {self.out}); "
            "busy Python threads at those highs:"
        ]
        lines += [f"      {n:3d} x {frame}" for frame, n in counts.most_common(top)]
        return "\n".join(lines)
