"""CPU time of process trees from /proc (Linux), for CPU-per-request accounting in benchmarks.

On a 2-core host shared with other jobs, wall-clock throughput moves with whatever else runs;
the CPU seconds each part of a served run spends (server workers, the PostgreSQL server, the
load generator) per answered request do not, so the benchmark reports both.

    before = TreeCpu.snapshot([server_pid])
    ...load...
    spent = TreeCpu.snapshot([server_pid]).minus(before)   # CPU seconds, children included
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, user+system CPU seconds) of a live process; None when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after its ')'.
    fields = raw[raw.rindex(")") + 2 :].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICK


def _all() -> dict[int, tuple[int, float]]:
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st is not None:
                out[int(entry)] = st
    return out


@dataclass(frozen=True)
class TreeCpu:
    """CPU seconds per live process of the trees under some root pids, at one moment."""

    seconds: dict[int, float]

    @classmethod
    def snapshot(cls, roots: list[int]) -> TreeCpu:
        procs = _all()
        children: dict[int, list[int]] = {}
        for pid, (ppid, _) in procs.items():
            children.setdefault(ppid, []).append(pid)
        seen: dict[int, float] = {}
        todo = [r for r in roots if r in procs]
        while todo:
            pid = todo.pop()
            if pid not in seen:
                seen[pid] = procs[pid][1]
                todo.extend(children.get(pid, []))
        return cls(seen)

    def minus(self, before: TreeCpu) -> float:
        """CPU seconds spent since `before` by the processes alive now (a process started
        in between counts from zero; one that ended in between is not counted)."""
        return sum(s - before.seconds.get(pid, 0.0) for pid, s in self.seconds.items())


def machine_busy_seconds() -> float:
    """CPU seconds all cores spent not idle since boot (/proc/stat), for the host's load."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    ticks = [int(f) for f in fields]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    return (sum(ticks[:8]) - idle) / _TICK


def postmaster_pid(pgdata: Path) -> int | None:
    """The PostgreSQL server's pid from `pgdata/postmaster.pid` (None when not readable)."""
    try:
        return int((pgdata / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
