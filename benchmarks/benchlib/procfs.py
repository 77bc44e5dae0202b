"""What a process costs, as /proc reports it: CPU seconds, RSS and peak RSS; and the machine's memory."""

from __future__ import annotations

import os
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def rss_mib(pid: int) -> dict[str, float]:
    """``rss_mib`` (now) and ``peak_rss_mib`` (the process's high-water mark), 0 for a process gone."""
    out: dict[str, float] = {}
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        text = ""
    for line in text.splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            out[line.split(":")[0]] = round(int(line.split()[1]) / 1024, 1)
    return {"rss_mib": out.get("VmRSS", 0.0), "peak_rss_mib": out.get("VmHWM", 0.0)}


def peak_rss_mib(pid: int) -> float:
    return rss_mib(pid)["peak_rss_mib"]


def meminfo() -> str:
    return Path("/proc/meminfo").read_text()
