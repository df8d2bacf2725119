"""The goals of issue 20 (fast builds), this llm-do against a baseline llm-do in the same rounds.

    python bench/fast_builds_bench.py --baseline ../base/.venv/bin/llm-do     # 5 rounds
    python bench/fast_builds_bench.py                                        # no baseline column

The baseline is another installation of llm-do, e.g. a worktree of the commit before issue 20
(e681a64) with its own virtualenv. Each llm-do gets its own copies of the projects and its own
cache folder (`XDG_CACHE_HOME` under --out), builds them once, and is then timed in rounds that
alternate the two, so a change in the machine's load falls on both alike:

- build of a 1-worker project (unchanged since its last build; and with `LLM_DO_NO_CACHE=1`, a
  full compile) and `lint` of it (unchanged since its last lint, answered by the lint record; and
  with `LLM_DO_NO_CACHE=1`, a full compile) -- goal < 0.2 s;
- build of examples/python_tools, unchanged -- goal < 0.3 s;
- build and `build --check` of 3,000 workers, unchanged -- check goal < 0.3 s; and `build --check`
  after one worker was edited (the lock is stale: exit 1); and `build` after one worker was edited
  (an incremental build: the others' front matter and node texts from the last build) -- goal < 0.5 s;
  and `build` after one worker's description and model were edited -- goal < 0.5 s;
  and `build` of 3,000 workers with an empty cache folder (a cold build, which also fills the cache):
  against the baseline, no slower;
- `python -c pass` and `llm-do --version`, the fixed cost of every row, to scale the others by on a
  loaded machine;
- `exec` of the 3,000-worker bundle against the 1-worker bundle (bench/exec_bench.py (b)) --
  goal <= 1.05 (ratio of medians).

Prints the median and minimum wall time and median CPU time of each, per llm-do, and the ratio of
this llm-do's median to the baseline's.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from _common import Series, bench_env, last_cpu, llm_do_command, machine, run_once, seconds, table, versions
from generate import DEFAULT_OUT, generate_project, minimal_project

FRONT_MATTER = "build 3000, one worker's front matter edited"
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "python_tools"
GOALS = {"build 1": 0.2, "build 1, full compile": 0.2, "lint 1": 0.2, "lint 1, full compile": 0.2, "build python_tools": 0.3, "build --check 3000": 0.3,
         "build 3000, one worker edited": 0.5, FRONT_MATTER: 0.5}
EXEC_GOAL = 1.05
STALE_CHECK = "build --check 3000, one worker edited"
COLD = "build 3000, cold (empty cache)"


def prepare(llm_do: list[str], out: Path) -> tuple[dict[str, list[list[str]]], dict[str, str]]:
    """Generate and build this llm-do's projects under `out`; the commands to time, by row label."""
    env = {**bench_env(), "XDG_CACHE_HOME": str(out / "cache")}
    shutil.rmtree(out / "cache", ignore_errors=True)  # records of an earlier run would stand for these new files
    one = generate_project(out / "workers-1", 1)
    big = generate_project(out / "workers-3000", 3000)
    edited = generate_project(out / "workers-3000-edited", 3000)
    rebuilt = generate_project(out / "workers-3000-rebuilt", 3000)
    front = generate_project(out / "workers-3000-front-matter", 3000)
    python_tools = out / "python_tools"
    shutil.rmtree(python_tools, ignore_errors=True)
    shutil.copytree(EXAMPLE, python_tools)
    minimal = minimal_project(out / "exec-minimal")
    solo = generate_project(out / "exec-solo-3000", 3000, solo_entry=True)
    time.sleep(2.1)  # older than a build record's racy window (build_record.RACY_NS): files are stamped, not read
    for root in (one, big, edited, rebuilt, front, python_tools, minimal, solo):
        run_once(llm_do + ["build", str(root)], env=env)
        run_once(llm_do + ["build", str(root)], env=env)  # the second build finds the first one's record
    run_once(llm_do + ["lint", str(one)], env=env)  # keeps the lint record the "lint 1" rows find
    commands = {
        "python -c pass": [[sys.executable, "-c", "pass"]],
        "llm-do --version": [llm_do + ["--version"]],
        "build 1": [llm_do + ["build", str(one)]],
        "build 1, full compile": [llm_do + ["build", str(one)]],
        "lint 1": [llm_do + ["lint", str(one)]],
        "lint 1, full compile": [llm_do + ["lint", str(one)]],
        "build python_tools": [llm_do + ["build", str(python_tools)]],
        "build 3000": [llm_do + ["build", str(big)]],
        COLD: [llm_do + ["build", str(big)]],
        "build --check 3000": [llm_do + ["build", "--check", str(big)]],
        STALE_CHECK: [llm_do + ["build", "--check", str(edited)]],
        "build 3000, one worker edited": [llm_do + ["build", str(rebuilt)]],
        FRONT_MATTER: [llm_do + ["build", str(front)]],
        "exec 1-worker bundle": [llm_do + ["exec", str(minimal / "bundle.lock"), "hi", "--model", "test"]],
        "exec 3000-worker bundle": [llm_do + ["exec", str(solo / "bundle.lock"), "hi", "--model", "test"]],
    }
    return commands, {"edited": str(edited), "rebuilt": str(rebuilt), "front matter": str(front)}


def edit_one_worker(project: Path, round_: int) -> None:
    """Change one worker's instructions (differently every round), so the lock is stale."""
    workers = sorted(project.rglob("*.worker"))
    path = workers[len(workers) // 2]
    text = path.read_text(encoding="utf-8").rstrip("\n").split("\n")
    if text[-1].startswith("Edit "):
        text.pop()
    path.write_text("\n".join([*text, f"Edit {round_}."]) + "\n", encoding="utf-8")


def edit_one_front_matter(project: Path, round_: int) -> None:
    """Change one worker's description (differently every round), and give it a model of its own
    in odd rounds and take it away in even ones: front matter edits local to the worker."""
    workers = sorted(project.rglob("*.worker"))
    path = workers[len(workers) // 2]
    lines = [line for line in path.read_text(encoding="utf-8").split("\n") if not line.startswith("model: ")]
    at = next(i for i, line in enumerate(lines) if line.startswith("description: "))
    lines[at] = f"description: 'Edited in round {round_}: quoted'"
    if round_ % 2:
        lines.insert(at + 1, "model: openai:gpt-4o-mini")
    path.write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT / "fast-builds", help="where projects are generated")
    parser.add_argument("--llm-do", dest="llm_do", help="path of the llm-do executable to time")
    parser.add_argument("--baseline", help="path of the baseline llm-do executable (e.g. of the commit before issue 20)")
    args = parser.parse_args(argv)
    variants = {"now": llm_do_command(args.llm_do)}
    if args.baseline:
        variants["baseline"] = [args.baseline]
    prepared = {name: prepare(cmd, args.out / name) for name, cmd in variants.items()}
    series: dict[tuple[str, str], Series] = {}
    for name in variants:
        env = {**bench_env(), "XDG_CACHE_HOME": str(args.out / name / "cache")}
        for label in prepared[name][0]:
            run_env = {**env, "LLM_DO_NO_CACHE": "1"} if label.endswith("full compile") else env
            if label == COLD:
                run_env = {**env, "XDG_CACHE_HOME": str(args.out / name / "cold-cache")}
            series[name, label] = Series(label, env=run_env)
    for round_ in range(args.runs):
        order = list(variants) if round_ % 2 == 0 else list(variants)[::-1]
        for name in order:
            commands, places = prepared[name]
            edit_one_worker(Path(places["edited"]), round_)
            edit_one_worker(Path(places["rebuilt"]), round_)
            edit_one_front_matter(Path(places["front matter"]), round_)
            for label, (argv_,) in commands.items():
                s = series[name, label]
                if label == COLD:
                    shutil.rmtree(s.env["XDG_CACHE_HOME"], ignore_errors=True)
                elapsed, _, _ = run_once(argv_, env=s.env, expect=1 if label == STALE_CHECK else 0)
                s.times.append(elapsed)
                s.cpu.append(last_cpu[0])

    print(f"issue 20 (fast builds): {args.runs} rounds; {machine()}")
    print(versions())
    print()
    headers = ["what", "median", "min", "cpu"]
    if args.baseline:
        headers += ["baseline median", "baseline cpu", "ratio"]
    headers.append("goal")
    rows = []
    labels = list(prepared["now"][0])
    for label in labels:
        now = series["now", label]
        row = [label, seconds(now.median), seconds(now.min), seconds(now.cpu_median)]
        if args.baseline:
            base = series["baseline", label]
            row += [seconds(base.median), seconds(base.cpu_median), f"{now.median / base.median:.2f}"]
        goal = GOALS.get(label)
        row.append(f"< {goal} s: {'ok' if now.median < goal else 'MISSED'}" if goal else "")
        rows.append(row)
    for name in variants:
        small, big = series[name, "exec 1-worker bundle"], series[name, "exec 3000-worker bundle"]
        ratio = big.median / small.median
        cpu_ratio = big.cpu_median / small.cpu_median
        row = [f"exec 3000 / exec 1 ({name})", f"{ratio:.3f}", f"{big.min / small.min:.3f}", f"{cpu_ratio:.3f}"]
        if args.baseline:
            row += ["", "", ""]
        row.append(f"<= {EXEC_GOAL}: {'ok' if ratio <= EXEC_GOAL else 'MISSED'}" if name == "now" else "")
        rows.append(row)
    print(table(headers, rows))
    print()
    print("median, min: wall time of the whole process; cpu: its median CPU time (user + system); ratio: this "
          "llm-do's median over the baseline's. For the exec rows the three columns are the ratios of the "
          "medians, of the minimums and of the CPU medians.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
