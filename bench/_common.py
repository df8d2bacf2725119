"""What the bench scripts share: timing whole processes, medians, a compact table, the machine."""

from __future__ import annotations

import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path


def llm_do_command(explicit: str | None = None) -> list[str]:
    """The installed `llm-do`: --llm-do, else next to this Python, else on PATH."""
    if explicit:
        return [explicit]
    beside = Path(sys.executable).parent / "llm-do"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("llm-do")
    if not found:
        raise SystemExit("bench: `llm-do` is not installed (pip install -e .), or pass --llm-do PATH")
    return [found]


def bench_env() -> dict[str, str]:
    """The environment for timed processes: no model from the environment, no bytecode writes."""
    env = dict(os.environ)
    env.pop("LLM_DO_MODEL", None)
    return env


class ProcessFailed(SystemExit):
    pass


last_cpu = [0.0]
"""CPU seconds of the last process `run_once` ran (children included): less sensitive than wall
time to other work on a shared machine."""


def run_once(argv: list[str], *, env: dict[str, str] | None = None, expect: int = 0) -> tuple[float, str, str]:
    """Wall time of one whole process, its stdout and stderr; fails loudly on an unexpected exit code.
    The process's CPU time (user + system) is left in `last_cpu[0]`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env or bench_env())
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    last_cpu[0] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != expect:
        raise ProcessFailed(f"bench: {' '.join(argv)} exited {proc.returncode} (expected {expect})\n"
                            f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return elapsed, proc.stdout, proc.stderr


@dataclass
class Series:
    label: str
    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    env: dict[str, str] | None = None
    """The environment of every run (default: `bench_env()`)."""

    def add(self, argv: list[str]) -> str:
        """Run `argv` once, record its wall and CPU time, return its stdout."""
        elapsed, out, _ = run_once(argv, env=self.env)
        self.times.append(elapsed)
        self.cpu.append(last_cpu[0])
        return out

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def min(self) -> float:
        return min(self.times)


def machine() -> str:
    cpus = os.cpu_count()
    load = ""
    if hasattr(os, "getloadavg"):
        load = f", load {os.getloadavg()[0]:.2f}"
    return (f"{platform.machine()}, {cpus} CPUs{load}, Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}")


def versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for dist in ("llm-do", "pydantic-ai-slim", "pydantic"):
        try:
            out.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            pass
    return ", ".join(out)


def table(headers: list[str], rows: list[list[str]]) -> str:
    """Left-aligned first column, right-aligned others."""
    widths = [max(len(str(r[i])) for r in [headers] + rows) for i in range(len(headers))]
    lines = []
    for j, r in enumerate([headers] + rows):
        cells = [str(c).ljust(widths[i]) if i == 0 else str(c).rjust(widths[i]) for i, c in enumerate(r)]
        lines.append("  ".join(cells).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def seconds(t: float) -> str:
    return f"{t:.3f} s"


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"
