"""Time `llm-do build` of one generated project with two llm-do checkouts in the same rounds: what a
change costs a build, as a ratio of medians.

    python bench/baseline_bench.py --baseline ../wt-base/.venv/bin/llm-do
    python bench/baseline_bench.py --baseline PATH --workers 300 --python-modules 4 --runs 5

Made for issue 15 (fingerprints and effects of the code Python tools run): the project is
generate.py's with `--python-modules M` shared tool modules (default 10), so every build
fingerprints tools that share `tools/shared.py`. The baseline is the llm-do of another checkout
(a worktree at the commit before the change, with its own venv). Each round builds the project
with both, alternating which goes first, twice each: with the introspection cache warm (what a
rebuild pays) and with `--no-cache` (the child imports the Python). Each llm-do keeps its own
cache folder, the project its own copy per llm-do, so neither reads what the other wrote.

Target: this checkout's build within 10% of the baseline's (ratio of medians < 1.10). Both the
wall-clock and the CPU ratio are shown: on a loaded shared machine the wall clock mostly measures
waiting for a CPU, and the CPU time (user + system of the process) is the steadier figure.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from _common import Series, bench_env, llm_do_command, machine, run_once, seconds, table, verdict, versions
from generate import DEFAULT_OUT, generate_project

TARGET = 1.10


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="path of the baseline checkout's llm-do executable")
    parser.add_argument("--llm-do", dest="llm_do", help="path of this checkout's llm-do (default: beside this Python)")
    parser.add_argument("--runs", type=int, default=7, help="timed rounds (default 7)")
    parser.add_argument("--workers", type=int, default=3000, help="workers in the project (default 3000)")
    parser.add_argument("--python-modules", type=int, default=10, help="shared Python tool modules (default 10)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the project is generated")
    args = parser.parse_args(argv)
    sides = {"this": llm_do_command(args.llm_do), "baseline": [args.baseline]}

    base = generate_project(args.out / f"baseline-{args.workers}-py{args.python_modules}", args.workers,
                            python_modules=args.python_modules)
    roots, envs = {}, {}
    for side, command in sides.items():
        roots[side] = args.out / f"baseline-{args.workers}-py{args.python_modules}-{side}"
        shutil.rmtree(roots[side], ignore_errors=True)
        shutil.copytree(base, roots[side])
        envs[side] = {**bench_env(), "XDG_CACHE_HOME": str(args.out / f"cache-{side}")}
        run_once(command + ["build", str(roots[side])], env=envs[side])  # warm-up; fills its cache
    series = {(side, cache): Series(f"build{'' if cache else ' --no-cache'} ({side})", env=envs[side])
              for side in sides for cache in (True, False)}
    for i in range(args.runs):
        order = list(sides) if i % 2 == 0 else list(reversed(sides))
        for cache in (True, False):
            for side in order:
                flag = [] if cache else ["--no-cache"]
                series[(side, cache)].add(sides[side] + ["build", *flag, str(roots[side])])

    print(f"llm-do build, this checkout against a baseline: {args.workers} workers, {args.python_modules} shared "
          f"Python tool modules, {args.runs} rounds; {machine()}")
    print(versions())
    print()
    rows = []
    for cache in (True, False):
        this, baseline = series[("this", cache)], series[("baseline", cache)]
        ratio, cpu_ratio = this.median / baseline.median, this.cpu_median / baseline.cpu_median
        for s in (baseline, this):
            rows.append([s.label, seconds(s.median), seconds(s.min), seconds(s.cpu_median), "", ""])
        rows.append(["  this / baseline", "", "", "", f"{ratio:.3f} (cpu {cpu_ratio:.3f})",
                     f"< {TARGET}: wall {verdict(ratio < TARGET)}, cpu {verdict(cpu_ratio < TARGET)}"])
    print(table(["command", "median", "min", "cpu", "ratio", "target"], rows))
    print()
    print("median, min: wall time of the whole process; cpu: its median CPU time (user + system); "
          "ratio: of the medians, measured in the same rounds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
