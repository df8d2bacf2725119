"""CPU of the introspection children with the fork server against fresh processes, as whole
`llm-do` processes.

    python bench/introspection_bench.py            # 5 runs of each row
    python bench/introspection_bench.py --runs 9

Rows, each with the fork server (the default) and with fresh children (`LLM_DO_NO_FORK_SERVER=1`,
the way every child started before the server, and where `fork` is missing), both without the
introspection cache (`LLM_DO_NO_CACHE=1`: every build imports the Python):
- `diff` of examples/python_tools against a copy with one tool's docstring edited: two builds,
  two introspections in one process, the second forked from the warm server;
- `build` of examples/python_tools: one introspection, where the server's preloading is the cost
  the fresh child paid anyway (it imports pydantic-ai to describe the tools);
- `build` of examples/orchestrator (schemas only): one introspection that needs no pydantic-ai,
  which the server then does not import either (it would be all extra).
CPU is user + system of the process and every process it waited for (the server reaps its
children, and is reaped at exit). Ratios are fork server / fresh, in the same run.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from _common import Series, bench_env, last_cpu, llm_do_command, machine, run_once, seconds, table, versions

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "python_tools"
SCHEMAS_ONLY = EXAMPLE.parent / "orchestrator"
"""Python with schemas and no tools: neither a fresh child nor the server imports pydantic-ai."""


def edited_copy(dest: Path) -> Path:
    """examples/python_tools with one tool's description changed."""
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("bundle.lock", "__pycache__"))
    tools = dest / "tools.py"
    text = tools.read_text()
    edited = text.replace('    """Find the action items in meeting notes.', '    """Find every action item in meeting notes.', 1)
    assert edited != text, "the tool to edit is not in examples/python_tools/tools.py"
    tools.write_text(edited)
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each row (default 5)")
    parser.add_argument("--llm-do", dest="llm_do", help="path of the llm-do executable to time")
    args = parser.parse_args(argv)
    llm_do = llm_do_command(args.llm_do)
    with tempfile.TemporaryDirectory(prefix="introspection-bench-") as tmp:
        edited = edited_copy(Path(tmp) / "python_tools")
        lock = Path(tmp) / "bundle.lock"
        commands = {
            "diff (2 introspections)": ([*llm_do, "diff", str(EXAMPLE), str(edited)], 1),
            "build (1 introspection)": ([*llm_do, "build", str(EXAMPLE), "-o", str(lock)], 0),
            "build, schemas only": ([*llm_do, "build", str(SCHEMAS_ONLY), "-o", str(lock)], 0),
        }
        rows = []
        for label, (command, expect) in commands.items():
            fork = Series("fork server", env={**bench_env(), "LLM_DO_NO_CACHE": "1"})
            fresh = Series("fresh", env={**bench_env(), "LLM_DO_NO_CACHE": "1", "LLM_DO_NO_FORK_SERVER": "1"})
            for _ in range(args.runs):
                for series in (fresh, fork):  # interleaved: the machine's load falls on both alike
                    _run(series, command, expect)
            rows.append([label, f"{fresh.cpu_median:.2f} s", f"{fork.cpu_median:.2f} s",
                         f"{fork.cpu_median / fresh.cpu_median:.2f}", seconds(fresh.median), seconds(fork.median)])
    print(f"machine: {machine()}\nversions: {versions()}\nmedians of {args.runs} runs, cache off\n")
    print(table(["llm-do", "CPU fresh", "CPU fork server", "ratio", "wall fresh", "wall fork server"], rows))
    return 0


def _run(series: Series, command: list[str], expect: int) -> None:
    elapsed, _, _ = run_once(command, env=series.env, expect=expect)
    series.times.append(elapsed)
    series.cpu.append(last_cpu[0])


if __name__ == "__main__":
    raise SystemExit(main())
