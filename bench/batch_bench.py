"""Batch throughput: inputs per second at concurrency 1, 4 and 16 when tools wait.

    python bench/batch_bench.py                      # 64 inputs, tool waits 50 ms
    python bench/batch_bench.py --inputs 128 --wait 0.1 --rounds 5

Each input is one run of a one-worker bundle whose model is scripted per run (a pydantic-ai
FunctionModel: first a call of the Python tool `wait`, which sleeps `--wait` seconds, then an
answer): two model requests and one waiting tool per input.

(a) In one process, through `llm_do.runtime.batch.runs.run_batch` and `run_one` (what `llm-do batch`
    runs), a fresh Runtime per input, one shared LoadedBundle. Median of `--rounds`.
(b) Whole `llm-do batch` processes with `--model test` (TestModel calls `wait` once, then
    answers), results written to a file as the command does: start-up included.
(c) The same with `--durable` (each input a DBOS workflow on the batch's queue, SQLite in a fresh
    file per level; `--durable-levels`, empty to skip; needs the `durable` extra): start-up, DBOS's
    launch and the queue's polling (0.1 s) included.

Goal: near-linear while the tools wait, i.e. speed-up close to the concurrency as long as the
waits dominate (at 16, 64 inputs are 4 rounds of 50 ms: the run's own CPU time starts to show).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _common import llm_do_command, machine, run_once, table, versions

TOOLS = '''import asyncio
import os

WAIT = float(os.environ.get("BENCH_WAIT", "0.05"))


async def wait() -> str:
    """Wait as a remote service would."""
    await asyncio.sleep(WAIT)
    return "waited"


TOOLS = {"wait": wait}
'''
WORKER = "---\ntools: [wait]\napprovals:\n  - allow wait\n---\nCall wait, then answer.\n"


def wait_project(root: Path) -> Path:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    manifest = {"version": 1, "name": "bench-batch", "worker_files": ["main.worker"], "python_files": ["tools.py"],
                "entry": {"worker": "main"}}
    (root / "project.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    (root / "tools.py").write_text(TOOLS, encoding="utf-8")
    (root / "main.worker").write_text(WORKER, encoding="utf-8")
    return root


def scripted_model(worker: str):
    from pydantic_ai import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    async def respond(messages, info):
        if any(isinstance(p, ToolReturnPart) for m in messages for p in m.parts):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("wait", {})])

    return FunctionModel(respond)


def in_process(bundle_path: Path, inputs: int, concurrency: int) -> float:
    from llm_do.runtime.batch.runs import BatchInput, run_batch, run_one
    from llm_do.runtime.bundle import load_bundle
    from llm_do.runtime.config import RuntimeConfig

    bundle = load_bundle(bundle_path)
    config = RuntimeConfig(model_for=scripted_model, approval_mode="approve_all")
    items = [BatchInput(n, {"input": f"input {n}"}) for n in range(1, inputs + 1)]
    results = []

    async def run(item):
        return await run_one(bundle, config, item)

    start = time.perf_counter()
    asyncio.run(run_batch(items, run, results.append, concurrency))
    elapsed = time.perf_counter() - start
    failed = [r for r in results if r.error]
    if len(results) != inputs or failed:
        raise SystemExit(f"bench: {len(results)} results, {len(failed)} failed: {failed[:1]}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=64)
    parser.add_argument("--wait", type=float, default=0.05)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--levels", default="1,4,16")
    parser.add_argument("--durable-levels", default="1,4,16")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / ".work")
    parser.add_argument("--llm-do")
    args = parser.parse_args(argv)
    os.environ["BENCH_WAIT"] = str(args.wait)
    levels = [int(c) for c in args.levels.split(",")]
    llm_do = llm_do_command(args.llm_do)
    root = wait_project(args.out / "batch-wait")
    run_once(llm_do + ["build", str(root)])
    bundle = root / "bundle.lock"
    print(f"machine: {machine()}\nversions: {versions()}")
    print(f"{args.inputs} inputs, tool waits {args.wait * 1000:g} ms, 2 model requests per input\n")

    sys.path.insert(0, str(root))
    in_process(bundle, min(args.inputs, 8), 4)  # warm-up: imports, the agent, the tools module
    rows = []
    base = None
    for c in levels:
        times = [in_process(bundle, args.inputs, c) for _ in range(args.rounds)]
        median = statistics.median(times)
        base = base or median
        floor = args.inputs / c * args.wait
        rows.append([f"(a) in process, concurrency {c}", f"{median:.3f} s", f"{args.inputs / median:.1f}/s",
                     f"{base / median:.2f}x", f"{floor:.3f} s", f"{floor / median:.0%}"])
    inputs_file = args.out / "batch-inputs.jsonl"
    inputs_file.write_text("".join(json.dumps(f"input {n}") + "\n" for n in range(1, args.inputs + 1)), encoding="utf-8")
    env = {**os.environ, "BENCH_WAIT": str(args.wait)}
    base = None
    for c in levels:
        results = args.out / f"batch-results-{c}.jsonl"
        results.unlink(missing_ok=True)
        start = time.perf_counter()
        proc = subprocess.run(llm_do + ["batch", str(bundle), str(inputs_file), "-o", str(results), "--model", "test",
                                        "--concurrency", str(c)], capture_output=True, text=True, env=env)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"bench: llm-do batch exited {proc.returncode}: {proc.stderr[-2000:]}")
        base = base or elapsed
        floor = args.inputs / c * args.wait
        rows.append([f"(b) llm-do batch process, concurrency {c}", f"{elapsed:.3f} s", f"{args.inputs / elapsed:.1f}/s",
                     f"{base / elapsed:.2f}x", f"{floor:.3f} s", f"{floor / elapsed:.0%}"])
    base = None
    for c in [int(c) for c in args.durable_levels.split(",") if c]:
        results = args.out / f"batch-durable-results-{c}.jsonl"
        results.unlink(missing_ok=True)
        db = args.out / f"batch-durable-{c}.sqlite"
        db.unlink(missing_ok=True)
        start = time.perf_counter()
        proc = subprocess.run(llm_do + ["batch", str(bundle), str(inputs_file), "-o", str(results), "--model", "test",
                                        "--concurrency", str(c), "--durable", f"sqlite:///{db.resolve()}"],
                              capture_output=True, text=True, env=env)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"bench: llm-do batch --durable exited {proc.returncode}: {proc.stderr[-2000:]}")
        base = base or elapsed
        floor = args.inputs / c * args.wait
        rows.append([f"(c) llm-do batch --durable, concurrency {c}", f"{elapsed:.3f} s", f"{args.inputs / elapsed:.1f}/s",
                     f"{base / elapsed:.2f}x", f"{floor:.3f} s", f"{floor / elapsed:.0%}"])
    print(table(["what", "time", "rate", "speed-up", "waiting alone", "of ideal"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
