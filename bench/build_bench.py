"""Time `llm-do build` and `llm-do build --check` as whole processes on generated projects.

    python bench/build_bench.py                      # 1, 300, 3000 workers; 7 runs each
    python bench/build_bench.py --runs 3 --sizes 1,300

For every size N the project is generated (bench/generate.py), checked to build with no
diagnostics, built once as a warm-up, then timed in rounds: each round runs `python -c pass`,
`llm-do --version`, `build` of every size and `build --check` of every (unchanged) size, so a
change in machine load spreads over all rows alike. Per-worker cost is the marginal cost
(median(N) - median(1)) / (N - 1); its 300 -> 3000 ratio near 1 means no superlinear step.

Targets (2-core machine): build of 3000 workers < 1.5 s; check of an unchanged 3000 < 1.5 s too
(`--check` builds in memory and compares bytes, so it costs a build); per-worker cost flat from
300 to 3000.

A project with Python (a copy of examples/python_tools) is built in the same rounds twice: with the
introspection cache warm (its Python did not change: no child process) and with `--no-cache` (the
child imports it, as every build did before the cache), against the same cache folder under --out.

The cost bound (spec/cost.md) is no part of `build` (the lock does not hold it: lint,
capabilities, graph and diff compute it), so it adds nothing to the rows above. What computing it
costs is measured in this process on the largest project, after the rounds, against a build that
compiles (in-process, no cache, so no step is skipped because the lock is current): the median CPU
time of `lint`'s check (`check_costs` over the resolved project) and of `capabilities`' bounds (the
entry's and every worker's, from the lock), each a share of that build's median CPU time (goal:
under 5%). Reading genai-prices' data, once per process and only when a model it prices is named,
is shown apart.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from _common import Series, bench_env, llm_do_command, machine, run_once, seconds, table, verdict, versions
from generate import DEFAULT_OUT, generate_project

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "python_tools"
BUILD_TARGET = 1.5
BOUND_SHARE_TARGET = 0.05
"""What computing the cost bound may add to a 3000-worker build (issue 35)."""
CACHED_TARGET = 0.3
CHECK_TARGET = BUILD_TARGET
FLAT_LIMIT = 1.3
"""A 300 -> 3000 per-worker ratio above this is reported as not flat (medians carry some noise)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each command (default 7)")
    parser.add_argument("--sizes", default="1,300,3000", help="worker counts (default 1,300,3000)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where projects are generated")
    parser.add_argument("--llm-do", dest="llm_do", help="path of the llm-do executable to time")
    parser.add_argument("--python-modules", type=int, default=0,
                        help="shared Python tool modules the workers use (generate.py; default none)")
    parser.add_argument("--json", dest="json_out", type=Path, help="also write the raw times here")
    args = parser.parse_args(argv)
    sizes = sorted({int(s) for s in args.sizes.split(",")})
    llm_do = llm_do_command(args.llm_do)

    projects = {}
    for n in sizes:
        suffix = f"-py{args.python_modules}" if args.python_modules else ""
        root = generate_project(args.out / f"workers-{n}{suffix}", n, python_modules=args.python_modules)
        _, out, _ = run_once(llm_do + ["lint", str(root), "--format", "json"])
        found = json.loads(out)["diagnostics"]
        if found:
            raise SystemExit(f"bench: the generated {n}-worker project has diagnostics: {found[:3]}")
        run_once(llm_do + ["build", str(root)])  # warm-up (page cache, .pyc)
        run_once(llm_do + ["build", "--check", str(root)])
        projects[n] = root

    python_project = args.out / "python_tools"
    shutil.rmtree(python_project, ignore_errors=True)
    shutil.copytree(EXAMPLE, python_project)
    env = {**bench_env(), "XDG_CACHE_HOME": str(args.out / "cache")}
    run_once(llm_do + ["build", str(python_project)], env=env)  # warm-up, and fills the cache
    cached = Series("build python_tools, Python unchanged (cached)", env=env)
    uncached = Series("build python_tools --no-cache", env=env)

    pass_series = Series("python -c pass")
    version_series = Series("llm-do --version")
    builds = {n: Series(f"build {n}") for n in sizes}
    checks = {n: Series(f"build --check {n}") for n in sizes}
    for _ in range(args.runs):
        pass_series.add([sys.executable, "-c", "pass"])
        version_series.add(llm_do + ["--version"])
        for n in sizes:
            builds[n].add(llm_do + ["build", str(projects[n])])
        for n in sizes:
            checks[n].add(llm_do + ["build", "--check", str(projects[n])])
        cached.add(llm_do + ["build", str(python_project)])
        uncached.add(llm_do + ["build", "--no-cache", str(python_project)])

    print(f"llm-do build benchmark: {args.runs} runs per row; {machine()}")
    print(versions())
    print()
    rows = [[s.label, "-", seconds(s.median), seconds(s.min), seconds(s.cpu_median), "", ""]
            for s in (pass_series, version_series)]
    smallest = sizes[0]
    ratios = {}
    for kind, series, target in (("build", builds, BUILD_TARGET), ("build --check", checks, CHECK_TARGET)):
        per_worker = {}
        for n in sizes:
            s = series[n]
            marginal = ""
            if n > smallest:
                per_worker[n] = (s.median - series[smallest].median) / (n - smallest)
                marginal = f"{per_worker[n] * 1000:.3f} ms"
            goal = ""
            if n == 3000:
                goal = f"< {target} s: {verdict(s.median < target)}"
            rows.append([kind, str(n), seconds(s.median), seconds(s.min), seconds(s.cpu_median), marginal, goal])
        big = [n for n in sizes if n > smallest]
        if len(big) >= 2:
            lo, hi = big[-2], big[-1]
            ratios[kind] = (lo, hi, per_worker[hi] / per_worker[lo] if per_worker[lo] > 0 else None)
    for s in (cached, uncached):
        goal = f"< {CACHED_TARGET} s: {verdict(s.median < CACHED_TARGET)}" if s is cached else ""
        rows.append([s.label, "2", seconds(s.median), seconds(s.min), seconds(s.cpu_median), "", goal])
    print(table(["command", "workers", "median", "min", "cpu", "per worker", "target"], rows))
    print()
    print("median, min: wall time of the whole process; cpu: its median CPU time (user + system), "
          "which other work on the machine disturbs less")
    print(f"per worker = (median(N) - median({smallest})) / (N - {smallest}): the cost each worker adds")
    for kind, (lo, hi, ratio) in ratios.items():
        if ratio is None:
            print(f"{kind}: per-worker ratio {lo} -> {hi} = n/a ({lo} workers cost no more than "
                  f"{smallest} within noise; compare the {hi}-worker median directly)")
            continue
        shape = "flat" if ratio <= FLAT_LIMIT else "NOT flat (superlinear step?)"
        print(f"{kind}: per-worker ratio {lo} -> {hi} = {ratio:.2f} ({shape})")
    print(f"fixed cost: `python -c pass` {seconds(pass_series.median)}, `llm-do --version` "
          f"{seconds(version_series.median)} (interpreter + CLI start-up, in every row above)")

    big = sizes[-1]
    data, build_cpu, lint_bound, report_bound = bound_seconds(projects[big], args.runs)
    print(f"cost bound, {big} workers (CPU, in this process): a compiling build {seconds(build_cpu)}; "
          f"genai-prices' data read once {seconds(data)}")
    for label, spent in (("lint's check (resolved project)", lint_bound), ("capabilities' bounds (lock)", report_bound)):
        share = spent / build_cpu
        print(f"  {label}: {seconds(spent)}, {100 * share:.1f}% of the build "
              f"(< {100 * BOUND_SHARE_TARGET:.0f}%: {verdict(share < BOUND_SHARE_TARGET)})")

    if args.json_out:
        data = {s.label: {"wall": s.times, "cpu": s.cpu}
                for s in [pass_series, version_series, *builds.values(), *checks.values(), cached, uncached]}
        args.json_out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0


def bound_seconds(root: Path, runs: int) -> tuple[float, float, float, float]:
    """CPU seconds, in this process: reading genai-prices' data (once), and the medians of a
    compiling build of the project at `root` (no cache), of its cost bound as `lint` computes it
    (over the resolved project: B001/B002) and as `capabilities` does (the entry's and every
    worker's, from the lock), interleaved so that load falls on all alike."""
    import gc
    import statistics
    import time

    from llm_do.compiler.cost.bound import CostAnalysis
    from llm_do.compiler.cost.inputs import of_bundle
    from llm_do.compiler.pipeline import compile_project
    from llm_do.compiler.stages.check.cost import check_costs
    from llm_do.pricing.genai import data_release, genai_sheet

    start = time.process_time()
    genai_sheet("openai:gpt-4o")
    data_release()
    data = time.process_time() - start
    doc = json.loads((root / "bundle.lock").read_bytes())
    builds, lint, report = [], [], []
    for _ in range(runs):
        gc.collect()  # each part starts with no garbage of the one before it
        start = time.process_time()
        resolved = compile_project(root, cache=False).resolved
        builds.append(time.process_time() - start)
        assert resolved is not None
        gc.collect()
        start = time.process_time()
        check_costs(resolved)
        lint.append(time.process_time() - start)
        del resolved
        gc.collect()
        start = time.process_time()
        analysis = CostAnalysis(of_bundle(doc))
        analysis.entry_bound()
        assert analysis.callee_bounds
        report.append(time.process_time() - start)
    return data, statistics.median(builds), statistics.median(lint), statistics.median(report)

if __name__ == "__main__":
    raise SystemExit(main())
