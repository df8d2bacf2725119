"""Time `llm-do exec` against pydantic-ai itself.

    python bench/exec_bench.py                        # all three parts
    python bench/exec_bench.py --parts c --iterations 500

(a) `llm-do exec` of a one-worker bundle (no tools, no template, `--model test`) against
    `python -c "from pydantic_ai import Agent; Agent('test').run_sync('hi')"`: whole processes,
    alternating, medians. Target: ratio <= 1.05.
(b) `llm-do exec` of a 3000-worker bundle against the one-worker bundle, both `--model test`,
    alternating. The 3000-worker bundle's entry is the same tool-less `main` as the one-worker
    bundle's, and the generated 2999-worker tree hangs beside it (G003 suppressed), so the run
    touches the entry worker only and the difference is what the other 2999 workers cost.
    Target: ratio <= 1.05.
(c) In one process: a chain of 5 nested worker calls (c1 calls c2 ... calls c5), each worker a
    FunctionModel that calls the next worker's tool once and then answers, run through llm-do's
    Runtime (models supplied with RuntimeConfig(model_for=...)) against the same chain written
    directly in pydantic-ai (agents calling agents from tools, usage=ctx.usage). Alternating,
    median per chain. Target: overhead ratio <= 1.2.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
from pathlib import Path

from _common import Series, llm_do_command, machine, run_once, seconds, table, verdict, versions
from generate import DEFAULT_OUT, chain_project, generate_project, minimal_project

PYDANTIC_AI_BASELINE = "from pydantic_ai import Agent; Agent('test').run_sync('hi')"
RATIO_TARGET_A = 1.05
RATIO_TARGET_B = 1.05
RATIO_TARGET_C = 1.2
CHAIN_LENGTH = 5


def alternate(commands: dict[str, list[str]], runs: int) -> dict[str, Series]:
    """Each command once as a warm-up, then `runs` rounds, the order alternating between rounds."""
    series = {label: Series(label) for label in commands}
    labels = list(commands)
    for label in labels:
        run_once(commands[label])
    for r in range(runs):
        for label in (labels if r % 2 == 0 else labels[::-1]):
            series[label].add(commands[label])
    return series


def paired(base: list[float], other: list[float]) -> float:
    """Median of the per-round ratios other/base: rounds run back to back, so a change in machine
    load between rounds cancels out."""
    return statistics.median(o / b for b, o in zip(base, other))


def compare_rows(base: Series, other: Series, base_label: str, other_label: str, target: float) -> list[list[str]]:
    """Two table rows: the baseline, then the other with its ratios to it."""
    ratio = other.median / base.median
    return [
        [base_label, seconds(base.median), seconds(base.min), seconds(base.cpu_median), "", "", "", ""],
        [other_label, seconds(other.median), seconds(other.min), seconds(other.cpu_median), f"{ratio:.3f}",
         f"{paired(base.times, other.times):.3f}", f"{other.min / base.min:.3f}",
         f"<= {target}: {verdict(ratio <= target)}"],
    ]


def part_a(llm_do: list[str], work: Path, runs: int) -> list[list[str]]:
    root = minimal_project(work / "exec-minimal")
    run_once(llm_do + ["build", str(root)])
    bundle = str(root / "bundle.lock")
    s = alternate({"pydantic-ai": [sys.executable, "-c", PYDANTIC_AI_BASELINE],
                   "llm-do exec": llm_do + ["exec", bundle, "hi", "--model", "test"]}, runs)
    return compare_rows(s["pydantic-ai"], s["llm-do exec"], "(a) python -c \"...Agent('test').run_sync('hi')\"",
                        "(a) llm-do exec, 1 worker, --model test", RATIO_TARGET_A)


def part_b(llm_do: list[str], work: Path, runs: int, n: int) -> list[list[str]]:
    small = minimal_project(work / "exec-minimal")
    big = generate_project(work / f"exec-solo-{n}", n, solo_entry=True)
    for root in (small, big):
        run_once(llm_do + ["build", str(root)])
    # not timed: the big run must touch the entry worker only
    events = work / "exec-events.jsonl"
    run_once(llm_do + ["exec", str(big / "bundle.lock"), "hi", "--model", "test", "--events", str(events)])
    started = [e["worker"] for e in map(json.loads, events.read_text().splitlines()) if e.get("event") == "worker_started"]
    if started != ["main"]:
        raise SystemExit(f"bench: the {n}-worker run started {started}, not just the entry worker")
    size = (big / "bundle.lock").stat().st_size
    s = alternate({"1": llm_do + ["exec", str(small / "bundle.lock"), "hi", "--model", "test"],
                   str(n): llm_do + ["exec", str(big / "bundle.lock"), "hi", "--model", "test"]}, runs)
    return compare_rows(s["1"], s[str(n)], "(b) llm-do exec, 1-worker bundle",
                        f"(b) llm-do exec, {n}-worker bundle ({size / 1e6:.1f} MB)", RATIO_TARGET_B)


# --- (c) in one process


def chain_model_fn(callee: str | None, calls: dict[str, int], name: str):
    """A FunctionModel function: call `callee` once (if any), then answer."""
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart

    def fn(messages, info):
        calls[name] = calls.get(name, 0) + 1
        last = messages[-1]
        if callee is not None and not any(isinstance(p, ToolReturnPart) for p in last.parts):
            return ModelResponse(parts=[ToolCallPart(callee, {"input": f"part of the request for {callee}"})])
        return ModelResponse(parts=[TextPart(f"{name} done")])

    return fn


def _delegate(child):
    async def call(ctx, input):
        result = await child.run(input, usage=ctx.usage)
        return result.output

    return call


def direct_chain(names: list[str], instructions: dict[str, str], calls: dict[str, int]):
    """The chain in plain pydantic-ai: each agent has a tool that runs the next agent."""
    from pydantic_ai import Agent, RunContext, Tool
    from pydantic_ai.models.function import FunctionModel

    agents: dict[str, Agent] = {}
    for i in reversed(range(len(names))):
        name = names[i]
        callee = names[i + 1] if i + 1 < len(names) else None
        tools = []
        if callee is not None:
            call = _delegate(agents[callee])
            # real objects, not the strings `from __future__ import annotations` leaves
            call.__annotations__ = {"ctx": RunContext[None], "input": str, "return": str}
            tools.append(Tool(call, name=callee, description=f"Call the worker '{callee}'"))
        agents[name] = Agent(FunctionModel(chain_model_fn(callee, calls, name), model_name=name),
                             instructions=instructions[name], name=name, tools=tools)
    return agents[names[0]]


def part_c(llm_do: list[str], work: Path, iterations: int, warmup: int) -> tuple[list[list[str]], list[str]]:
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import RunUsage

    from llm_do.runtime import Runtime, RuntimeConfig, load_bundle

    root = chain_project(work / "exec-chain", CHAIN_LENGTH)
    run_once(llm_do + ["build", str(root)])
    bundle = load_bundle(root / "bundle.lock")
    names = [f"c{i}" for i in range(1, CHAIN_LENGTH + 1)]
    instructions = {n: bundle.worker(n).instructions for n in names}

    llm_calls: dict[str, int] = {}
    direct_calls: dict[str, int] = {}
    models = {n: FunctionModel(chain_model_fn(names[i + 1] if i + 1 < len(names) else None, llm_calls, n),
                               model_name=n) for i, n in enumerate(names)}
    config = RuntimeConfig(model_for=models.__getitem__)
    direct = direct_chain(names, instructions, direct_calls)
    reused = Runtime(bundle, config)

    async def run_direct() -> str:
        return (await direct.run("hi")).output

    async def run_fresh() -> str:
        return (await Runtime(bundle, config).run_async("hi")).output

    async def run_reused() -> str:
        reused.usage = RunUsage()  # one run's usage; the request limit counts per run
        return (await reused.run_async("hi")).output

    variants = {"pydantic-ai direct": run_direct, "llm-do, Runtime per chain": run_fresh,
                "llm-do, one Runtime reused": run_reused}

    async def measure() -> tuple[dict[str, list[float]], dict[str, list[float]]]:
        wall: dict[str, list[float]] = {k: [] for k in variants}
        cpu: dict[str, list[float]] = {k: [] for k in variants}
        labels = list(variants)
        for i in range(warmup + iterations):
            for label in (labels if i % 2 == 0 else labels[::-1]):
                start, start_cpu = time.perf_counter(), time.process_time()
                output = await variants[label]()
                elapsed, elapsed_cpu = time.perf_counter() - start, time.process_time() - start_cpu
                if output != "c1 done":
                    raise SystemExit(f"bench: {label} answered {output!r}")
                if i >= warmup:
                    wall[label].append(elapsed)
                    cpu[label].append(elapsed_cpu)
        return wall, cpu

    gc.collect()
    wall, cpu = asyncio.run(measure())
    total = warmup + iterations
    expected = {n: 2 * total * 2 if n != names[-1] else total * 2 for n in names}  # llm-do has two variants
    if llm_calls != expected or direct_calls != {n: v // 2 for n, v in expected.items()}:
        raise SystemExit(f"bench: unexpected model calls: llm-do {llm_calls}, direct {direct_calls}")
    base_times = wall["pydantic-ai direct"]
    base = statistics.median(base_times)
    rows = []
    for label, ts in wall.items():
        med = statistics.median(ts)
        row = [f"(c) {label}", f"{med * 1000:.2f} ms", f"{min(ts) * 1000:.2f} ms",
               f"{statistics.median(cpu[label]) * 1000:.2f} ms"]
        if label == "pydantic-ai direct":
            row += ["", "", "", ""]
        else:
            row += [f"{med / base:.3f}", f"{paired(base_times, ts):.3f}", f"{min(ts) / min(base_times):.3f}",
                    f"<= {RATIO_TARGET_C}: {verdict(med / base <= RATIO_TARGET_C)}"]
        rows.append(row)
    notes = [f"(c) {iterations} chains per variant after {warmup} warm-up chains; {CHAIN_LENGTH} workers, "
             f"{2 * CHAIN_LENGTH - 1} model requests per chain"]
    return rows, notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="abc", help="which parts to run (default abc)")
    parser.add_argument("--runs", type=int, default=11, help="process runs per command in (a), (b) (default 11)")
    parser.add_argument("--workers", type=int, default=3000, help="size of the big bundle in (b) (default 3000)")
    parser.add_argument("--iterations", type=int, default=300, help="chains per variant in (c) (default 300)")
    parser.add_argument("--warmup", type=int, default=20, help="warm-up chains per variant in (c) (default 20)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where bundles are generated")
    parser.add_argument("--llm-do", dest="llm_do", help="path of the llm-do executable to time")
    args = parser.parse_args(argv)
    llm_do = llm_do_command(args.llm_do)
    args.out.mkdir(parents=True, exist_ok=True)

    rows: list[list[str]] = []
    notes: list[str] = []
    if "a" in args.parts:
        rows += part_a(llm_do, args.out, args.runs)
    if "b" in args.parts:
        rows += part_b(llm_do, args.out, args.runs, args.workers)
    if "c" in args.parts:
        more, notes = part_c(llm_do, args.out, args.iterations, args.warmup)
        rows += more
    print(f"llm-do exec benchmark: {args.runs} process runs per row in (a), (b); {machine()}")
    print(versions())
    print()
    print(table(["what", "median", "min", "cpu", "ratio", "paired", "min ratio", "target"], rows))
    print("median, min: wall time (whole processes in (a), (b); one chain in (c)); cpu: median CPU time (user + system)")
    print("ratio: of the medians (the target's figure); paired: median of the ratios of runs made back to back; "
          "min ratio: of the minimums.\nOn a busy machine the three disagree by more than a few percent: "
          "read a target as met only when they agree.")
    for note in notes:
        print(note)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
