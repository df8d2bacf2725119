"""`llm-do test` and `--record`: replaying every example's cases, and what recording adds to a run.

    python bench/cases_bench.py                 # 5 rounds, model latency 0.2 s
    python bench/cases_bench.py --rounds 9 --latency 0.5 --requests 20

(a) Every example's cases replayed offline, all together, in one process: each project built in
    memory (introspection cached, as after a first build) and each case run by the runner `llm-do
    test` uses (`llm_do.cli.testing.case_run.CaseRunner`: a scratch copy, the cassette replayed,
    expectations checked). Goal: under 10 s. Also with the builds left out.
(b) One `llm-do test` process per example, one after the other: start-up and build included.
(c) Recording: one run of a worker making `--requests` model requests (a pydantic-ai FunctionModel
    that waits `--latency` seconds per request, far faster than any hosted model, and calls a
    filesystem tool each turn), plain and with the recorder wrapped around every call's model as
    `--record` does (cassette built and written), alternating, in one process. Goal: at most 5 %
    of the run's time. The absolute cost per request is printed too: it is what recording adds to
    any run, whatever its model's latency.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _common import llm_do_command, machine, run_once, table, verdict, versions

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p.parent for p in (REPO / "examples").glob("*/project.json"))


def replay_all(with_builds: bool, built: dict[Path, bytes]) -> tuple[float, int]:
    """Seconds to replay every example's cases (building first when `with_builds`), and how many."""
    from llm_do.cli.testing.case_run import CaseRunner
    from llm_do.cli.testing.cases import case_files, load_case_file
    from llm_do.compiler.pipeline import compile_project

    count = 0
    start = time.perf_counter()
    for root in EXAMPLES:
        if with_builds or root not in built:
            result = compile_project(root)
            assert result.bundle is not None, root
            built[root] = result.bundle
        runner = CaseRunner(root, built[root])
        for path in case_files(root):
            for case in load_case_file(path, root):
                outcome = runner.run(case)
                assert outcome.status == "passed", (case.case.name, outcome.problems)
                count += 1
        for name in [m for m, mod in sys.modules.items() if (getattr(mod, "__file__", "") or "").startswith("/tmp")]:
            del sys.modules[name]  # examples share module names (schemas, tools)
    return time.perf_counter() - start, count


def record_run(root: Path, requests: int, latency: float, recording: bool) -> float:
    from pydantic_ai import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    from llm_do.runtime.bundle import load_bundle
    from llm_do.runtime.config import RuntimeConfig
    from llm_do.runtime.recording.cassette import write_cassette
    from llm_do.runtime.recording.recorder import Recorder
    from llm_do.runtime.recording.redaction import Redactor
    from llm_do.runtime.runtime import Runtime

    async def model(messages: list, info: object) -> ModelResponse:
        await asyncio.sleep(latency)
        turn = sum(1 for m in messages if m.kind == "response")
        if turn + 1 < requests:
            return ModelResponse(parts=[ToolCallPart("read_file", {"path": "notes.txt"}, tool_call_id=f"c{turn}")])
        return ModelResponse(parts=[TextPart("done")])

    bundle = load_bundle(root / "bundle.lock")
    config = RuntimeConfig(model=FunctionModel(model, model_name="bench"))
    recorder = Recorder(bundle, "main")
    if recording:
        from dataclasses import replace

        config = replace(config, wrap_model=recorder.wrap, on_event=recorder.on_event)
    start = time.perf_counter()
    output = Runtime(bundle, config).run("go").output
    if recording:
        recorder.inputs.append("go")
        recorder.outputs.append(output)
        write_cassette(root / "rec" / "main.json", recorder.cassette(Redactor({}, [])))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per model request in (c)")
    parser.add_argument("--requests", type=int, default=10, help="model requests per run in (c)")
    parser.add_argument("--llm-do", help="the llm-do executable for (b)")
    args = parser.parse_args()
    print(f"{machine()}\n{versions()}\n")

    built: dict[Path, bytes] = {}
    replay_all(True, built)  # warm: introspection cached, imports done
    with_builds = [replay_all(True, built) for _ in range(args.rounds)]
    replays = [replay_all(False, built) for _ in range(args.rounds)]
    count = replays[0][1]
    a_total = statistics.median(t for t, _ in with_builds)
    a_replay = statistics.median(t for t, _ in replays)

    llm_do = llm_do_command(args.llm_do)
    processes = []
    for _ in range(max(1, args.rounds // 2)):
        start = time.perf_counter()
        for root in EXAMPLES:
            run_once([*llm_do, "test", str(root)])
        processes.append(time.perf_counter() - start)
    b_total = statistics.median(processes)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "proj"
        root.mkdir()
        (root / "project.json").write_text('{"version": 1, "worker_files": ["main.worker"], "entry": {"worker": "main"}}')
        (root / "main.worker").write_text("---\ntoolsets: [filesystem_project_ro]\n---\nRead notes.txt each turn.\n")
        (root / "notes.txt").write_text("notes\n" * 200)
        run_once([*llm_do, "build", str(root)])
        plain, recorded = [], []
        record_run(root, args.requests, args.latency, True)  # warm
        for _ in range(args.rounds):
            plain.append(record_run(root, args.requests, args.latency, False))
            recorded.append(record_run(root, args.requests, args.latency, True))
    p, r = statistics.median(plain), statistics.median(recorded)
    overhead = (r - p) / p
    per_request_ms = (r - p) / args.requests * 1000

    print(table(["measure", "median", "goal"], [
        [f"(a) {count} cases of {len(EXAMPLES)} examples, built and replayed in one process", f"{a_total:.2f} s",
         f"< 10 s {verdict(a_total < 10)}"],
        ["(a) the same, replays only", f"{a_replay:.2f} s", ""],
        [f"(b) {len(EXAMPLES)} `llm-do test` processes, one after the other", f"{b_total:.2f} s", ""],
        [f"(c) a run of {args.requests} requests at {args.latency:.2f} s each, plain", f"{p:.3f} s", ""],
        ["(c) the same, recorded", f"{r:.3f} s", ""],
        ["(c) recording's cost", f"{overhead * 100:+.1f} % ({per_request_ms:.2f} ms a request)",
         f"<= 5 % {verdict(overhead <= 0.05)}"],
    ]))


if __name__ == "__main__":
    main()
