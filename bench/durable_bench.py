"""What `--durable` costs, in two parts.

Whole processes (the default): `llm-do exec` of examples/greeter (one scripted turn) plain and
`--durable` (SQLite beside the bundle), alternating in rounds, and a run that waits for an
approval: `exec --durable --detach-approvals`, `approve`, `resume`. It prints medians and the
added time of `--durable` and of `resume` against the plain exec of the same round, and how much
of the added time is importing DBOS (a process importing what plain `exec` imports, against one
importing DBOS too, and one importing DBOS in a thread while its main thread imports the rest: the
overlap a durable run could get by importing DBOS during the work before its first step).

Per step (`--steps N`): one run of a scripted worker that calls a Python tool N times, plain
against durable, in one process, alternating; a step is a model request or a tool call. DBOS's
launch and shutdown (paid once per `exec --durable` process) are timed apart.

    python bench/durable_bench.py [--rounds 5] [--out DIR]
    python bench/durable_bench.py --steps 50 [--runs 7] [--db postgresql://...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Series, last_cpu, llm_do_command, machine, run_once, table, versions  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

TOOLS = '''
def tick(n: int) -> str:
    """Count."""
    return f"tick {n}"


TOOLS = {"tick": tick}
'''

WORKER = """---
tools: [tick]
approvals:
  - allow tick
---
Tick.
"""


def make_project(root: Path, tools: str = TOOLS, worker: str = WORKER) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    (root / "project.json").write_text(json.dumps({"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"],
                                                   "entry": {"worker": "main", "args": {"input": "go"}}}))
    (root / "tools.py").write_text(tools)
    (root / "main.worker").write_text(worker)
    subprocess.run([sys.executable, "-m", "llm_do.cli.main", "build", str(root)], check=True, capture_output=True)
    return root / "bundle.lock"


def script(steps: int, runs: int) -> dict:
    turns = []
    for _ in range(runs):
        turns += [{"tool_calls": [{"tool": "tick", "args": {"n": i}}]} for i in range(steps)] + [{"text": "done"}]
    return {"workers": {"main": turns}}


EXEC_IMPORTS = "import llm_do.cli.main, llm_do.cli.commands.exec, llm_do.runtime.runtime, llm_do.runtime.script, pydantic_ai"
DURABLE_IMPORTS = "import llm_do.cli.durable_run, llm_do.runtime.durable.dbos"
OVERLAPPED_IMPORTS = (f"import threading; t = threading.Thread(target=lambda: exec({DURABLE_IMPORTS!r})); t.start(); "
                      f"{EXEC_IMPORTS}; t.join()")
"""What a plain `exec` imports, and what `exec --durable` imports besides: whole processes, so the
share of DBOS's import in the added time is measured the same way as the added time."""

WAITING_TOOLS = '''
def publish(text: str) -> str:
    """Publish (asks for approval)."""
    return "published"


TOOLS = {"publish": publish}
'''

WAITING_SCRIPT = {"workers": {"main": [{"tool_calls": [{"tool": "publish", "args": {"text": "news"}}]}, {"text": "done"}]}}


def processes(rounds: int, out: Path) -> None:
    """Whole processes: plain and durable exec of the greeter, and a waiting run answered and resumed."""
    llm_do = llm_do_command()
    greeter = out / "greeter"
    shutil.rmtree(greeter, ignore_errors=True)
    shutil.copytree(ROOT / "examples" / "greeter", greeter)
    run_once([*llm_do, "build", str(greeter)])
    waiting = make_project(out / "waiting", WAITING_TOOLS, "---\ntools: [publish]\n---\nPublish.\n")
    (out / "waiting.json").write_text(json.dumps(WAITING_SCRIPT))
    imports, dbos_imports = Series("import (what plain exec imports)"), Series("import, and DBOS")
    overlapped = Series("import, DBOS in a thread alongside")
    plain, durable = Series("plain exec"), Series("exec --durable")
    detached, approve, resume = Series("exec --durable --detach-approvals"), Series("approve"), Series("resume")
    first = run_once([*llm_do, "exec", str(greeter / "bundle.lock"), "--script", str(greeter / "script.json"), "--durable"])[0]
    for i in range(rounds + 1):  # the first round warms up
        imports.add([sys.executable, "-c", EXEC_IMPORTS])
        dbos_imports.add([sys.executable, "-c", f"{EXEC_IMPORTS}; {DURABLE_IMPORTS}"])
        overlapped.add([sys.executable, "-c", OVERLAPPED_IMPORTS])
        plain.add([*llm_do, "exec", str(greeter / "bundle.lock"), "--script", str(greeter / "script.json")])
        durable.add([*llm_do, "exec", str(greeter / "bundle.lock"), "--script", str(greeter / "script.json"), "--durable"])
        elapsed, _, err = run_once([*llm_do, "exec", str(waiting), "--script", str(out / "waiting.json"), "--durable",
                                    "--detach-approvals"], expect=4)
        detached.times.append(elapsed)
        detached.cpu.append(last_cpu[0])
        rid = err.split("run id: ")[1].split()[0]
        approve.add([*llm_do, "approve", rid, "1", "--db", f"sqlite:///{waiting.parent}/.llm-do/runs.sqlite"])
        resume.add([*llm_do, "resume", rid, "--db", f"sqlite:///{waiting.parent}/.llm-do/runs.sqlite",
                    "--script", str(out / "waiting.json")])
        if i == 0:
            for series in (imports, dbos_imports, overlapped, plain, durable, detached, approve, resume):
                series.times.clear()
                series.cpu.clear()
    base = plain.median
    print(f"durable_bench (whole processes): examples/greeter, one scripted turn, SQLite; {rounds} rounds, medians")
    print(f"machine: {machine()}; {versions()}")
    cpu = plain.cpu_median
    runs = (durable, detached, approve, resume)
    print(table(["", "median", "added to plain exec", "CPU median", "added CPU"], [
        [s.label, f"{s.median * 1000:.0f} ms", f"{(s.median - base) * 1000:+.0f} ms" if s in runs else "",
         f"{s.cpu_median * 1000:.0f} ms", f"{(s.cpu_median - cpu) * 1000:+.0f} ms" if s in runs else ""]
        for s in (plain, *runs, imports, dbos_imports, overlapped)]))
    print("(wall time on a busy machine grows with its load; CPU time, children included, much less)")
    added, cpu_added = durable.median - base, durable.cpu_median - cpu
    dbos, cpu_dbos = dbos_imports.median - imports.median, dbos_imports.cpu_median - imports.cpu_median
    print(f"of the time --durable adds, importing DBOS (SQLAlchemy, psycopg, pydantic-ai's DBOS support; outside llm-do) "
          f"takes {dbos * 1000:+.0f} ms wall ({dbos / added:.0%}), {cpu_dbos * 1000:+.0f} ms CPU ({cpu_dbos / cpu_added:.0%})")
    saved, cpu_saved = dbos_imports.median - overlapped.median, dbos_imports.cpu_median - overlapped.cpu_median
    print(f"importing DBOS in a thread while the main thread imports the rest saves {saved * 1000:+.0f} ms wall, "
          f"{cpu_saved * 1000:+.0f} ms CPU against importing it after them")
    print(f"the first `exec --durable` on a new database (DBOS creates its tables): {first * 1000:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, help="per step: tool calls per run (in one process)")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / ".work" / "durable")
    parser.add_argument("--db", help="a database URL (default: SQLite in a temporary folder)")
    args = parser.parse_args()
    if args.steps is None:
        processes(args.rounds, args.out)
        return

    from llm_do.runtime.bundle import load_bundle
    from llm_do.runtime.config import RuntimeConfig
    from llm_do.runtime.durable import dbos as durable
    from llm_do.runtime.runtime import Runtime
    from llm_do.runtime.script import Script, ScriptPlayer

    bundle_path = make_project(args.out / "tick")
    bundle = load_bundle(bundle_path)
    digest = str(bundle.text.get("digest"))
    data = {"input": "go"}
    total = args.runs + 1  # one warm-up each
    plain_player = ScriptPlayer(Script.model_validate(script(args.steps, total)))
    durable_player = ScriptPlayer(Script.model_validate(script(args.steps, total)))

    db = args.db or f"sqlite:///{tempfile.mkdtemp(prefix='llm-do-bench-')}/runs.sqlite"
    from pydantic_ai.usage import RunUsage, UsageLimits

    limits = UsageLimits(request_limit=None, tool_calls_limit=None)
    runtime = durable.durable_runtime(bundle, RuntimeConfig(model_for=durable_player.model_for, usage_limits=limits),
                                      digest=digest, player=durable_player)
    t0 = time.perf_counter()
    durable.prepare(runtime)
    workflow = durable.register_run_workflow(runtime)
    durable.launch(db, executor=f"llm-do-bench-{uuid.uuid4()}", digest=digest)
    launched = time.perf_counter() - t0

    plain_times, durable_times = [], []
    for i in range(total):
        t = time.perf_counter()
        Runtime(bundle, RuntimeConfig(model_for=plain_player.model_for, usage_limits=limits)).run(data)
        plain = time.perf_counter() - t
        runtime.usage = RunUsage()
        t = time.perf_counter()
        outcome, _ = asyncio.run(durable.start_or_resume(workflow, str(uuid.uuid4()), {"worker": "main", "input": data},
                                                         runtime))
        assert outcome == "done"
        took = time.perf_counter() - t
        if i:  # the first of each is a warm-up
            plain_times.append(plain)
            durable_times.append(took)
    t = time.perf_counter()
    durable.shutdown()
    shut = time.perf_counter() - t

    steps = 2 * args.steps + 1
    p, d = statistics.median(plain_times), statistics.median(durable_times)
    print(f"durable_bench: {args.steps} tool calls + {args.steps + 1} model requests = {steps} steps per run, "
          f"{args.runs} runs each ({'Postgres' if db.startswith('postgres') else 'SQLite'})")
    print(f"machine: {machine()}; {versions()}")
    print(table(["", "median run", "per step"], [
        ["plain", f"{p * 1000:.1f} ms", f"{p / steps * 1000:.2f} ms"],
        ["--durable", f"{d * 1000:.1f} ms", f"{d / steps * 1000:.2f} ms"],
        ["overhead", f"{(d - p) * 1000:.1f} ms", f"{(d - p) / steps * 1000:.2f} ms"],
    ]))
    print(f"once per durable process: DBOS launch (with agents prepared) {launched * 1000:.0f} ms, shutdown {shut * 1000:.0f} ms")


if __name__ == "__main__":
    main()
