"""Is the cost bound honest? Fuzzed runs of the examples and of generated projects, none of which
may cost more than its project's bound (spec/cost.md).

    python bench/cost_bench.py                      # 10,000 runs: 100 of each example, the rest of 60 generated projects
    python bench/cost_bench.py --runs 1000 --example-runs 20 --generated 10 --seed 7

Every run is in this process, on function models standing in for each worker's model (its label
is the model the worker would run on, so the run prices it as that model). Each response is a
random choice the limits allow: stop, or call up to 5 of the worker's callees at once and a tool it
does not have (a model may call any name: pydantic-ai asks it again, so even a worker without tools
can make every request its run allows; no other tool runs), with input and output tokens up to
what one request can have (the model's context window, `max_tokens`), as
the token kinds and service tier genai-prices prices dearest or as plain tokens. One run in five
is greedy: every response takes the most tokens at the dearest price, and either calls as much as
it can or leads along the path to the bound's dearest request, which then goes on until a limit
stops the run.
A run ends when its entry answers or a limit stops it (what it spent until then counts).

What it prints: per project, the runs, the bound, the worst run observed, their ratio
(bound / worst; 1 means a run reached the bound) and the runs above the bound (must be none);
then the share of runs within their bound (goal: 100%) and the largest ratio of the examples
(goal: within 2x). Generated projects have random limits (requests, input and total tokens, tool
calls per response), `max_tokens`, recursion and declared prices.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import random
import shutil
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
GENERATED_MODELS = {"ollama:small": {"input_mtok": 0.5, "output_mtok": 1.5, "context_window": 4000},
                    "ollama:large": {"input_mtok": 3, "output_mtok": 12, "context_window": 16000},
                    "ollama:tiered": {"input_mtok": 1, "output_mtok": 4, "context_window": 8000}}
GENAI_MODELS = ["anthropic:claude-sonnet-4-5", "openai:gpt-4o-mini"]


def generated_project(root: Path, rnd: random.Random) -> Path:
    """A random worker graph under random limits (recursion declared where it loops)."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    n = rnd.randint(1, 7)
    names = [f"w{i}" for i in range(n)]
    calls = {w: sorted(rnd.sample(names[i + 1:], k=min(len(names) - i - 1, rnd.randint(0, 3)))) for i, w in enumerate(names)}
    loops = {w for w in names if rnd.random() < 0.2}
    for w in loops:
        calls[w] = sorted({*calls[w], w})
    limits: dict[str, Any] = {"request_limit": rnd.randint(1, 12)}
    if rnd.random() < 0.5:
        limits["input_tokens_limit"] = rnd.randint(1, 40_000)
    if rnd.random() < 0.3:
        limits["total_tokens_limit"] = rnd.randint(1, 60_000)
    if rnd.random() < 0.4:
        limits["tool_calls_limit"] = rnd.randint(0, 3)
    models = [*GENERATED_MODELS, *GENAI_MODELS]
    manifest = {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "w0"},
                "runtime": {"max_depth": rnd.randint(n, n + 3), "usage_limits": limits},
                "defaults": {"model": rnd.choice(models)}, "cost": {"prices": GENERATED_MODELS}, "suppress": ["G003"]}
    (root / "project.json").write_text(json.dumps(manifest), encoding="utf-8")
    for w in names:
        front = [f"description: worker {w}"]
        if rnd.random() < 0.5:
            front.append(f"model: {rnd.choice(models)}")
        if rnd.random() < 0.6:
            front.append(f"model_settings: {{max_tokens: {rnd.randint(1, 3000)}}}")
        if calls[w]:
            front.append(f"toolsets: [{', '.join(calls[w])}]")
        if w in loops:
            front.append("recursive: true")
        (root / f"{w}.worker").write_text("---\n" + "\n".join(front) + "\n---\nWork.\n", encoding="utf-8")
    return root


def compiled(project: Path, lock_dir: Path) -> Path | None:
    from llm_do.compiler.pipeline import compile_project

    lock_dir.mkdir(parents=True, exist_ok=True)
    result = compile_project(project, lock_dir=lock_dir, cache=False)
    if result.bundle is None:
        return None
    lock = lock_dir / "bundle.lock"
    lock.write_bytes(result.bundle)
    return lock


def args_for(schema: dict[str, Any]) -> dict[str, Any]:
    """The smallest arguments a JSON Schema object takes (required fields only)."""
    out: dict[str, Any] = {}
    for name in schema.get("required", []):
        prop = (schema.get("properties") or {}).get(name, {})
        if "$ref" in prop:
            ref = prop["$ref"].rsplit("/", 1)[-1]
            prop = (schema.get("$defs") or {}).get(ref, {})
        if "enum" in prop:
            out[name] = prop["enum"][0]
            continue
        kind = prop.get("type", "string")
        out[name] = {"string": "x", "integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}.get(kind, "x")
    return out


class Fuzzer:
    """One run's function models: each worker's responses, random within what one request can have.

    Modes: `random`; `wide` (greedy: every response at its dearest and calling as much as it can);
    `deep` (greedy along the path to the bound's dearest request: each worker on it calls the next,
    the last one, on the dearest model, goes on until the run's limits stop it)."""

    def __init__(self, rnd: random.Random, costs: Any, mode: str, bound: Any, variant: int = 0) -> None:
        self.rnd = rnd
        self.costs = costs
        self.greedy = mode != "random"
        self.path: tuple[str, ...] = bound.path if mode == "deep" and bound.dominant is not None else ()
        self.target = bound.dominant.model if self.path else None
        self.unknown = 0
        self.variant = variant
        """Which of a worker's other tools a `deep` run calls (each deep run of a project the next one)."""

    def model_for(self, worker: str) -> Any:
        from pydantic_ai.models.function import FunctionModel

        from llm_do.compiler.cost.models import CHOSEN

        options = sorted(m for m in self.costs.models[worker] if m != CHOSEN)
        model = self.target if self.path and worker == self.path[-1] else self.rnd.choice(options)
        return FunctionModel(self._respond(worker, model), model_name=model)

    def _ceiling(self, worker: str, model: str) -> tuple[int, int]:
        from llm_do.pricing.ceiling import worst_request
        from llm_do.pricing.sheets import price_sheet

        inputs = self.costs.inputs
        spec = inputs.workers[worker]
        worst = worst_request(price_sheet(model, inputs.prices), inputs.settings(worker), inputs.limits, spec.server_side_tools)
        assert worst.input_tokens is not None and worst.output_tokens is not None
        return worst.input_tokens, worst.output_tokens

    def _respond(self, worker: str, model: str) -> Any:
        from pydantic_ai import ModelResponse, TextPart, ToolCallPart

        in_max, out_max = self._ceiling(worker, model)
        rnd = self.rnd

        async def respond(messages: list[Any], info: Any) -> ModelResponse:
            usage, details = self._usage(model, in_max, out_max)
            callees = [t for t in info.function_tools if t.name in self.costs.inputs.workers]
            if self.path:
                return ModelResponse(parts=self._along_path(worker, info), usage=usage, provider_details=details)
            if not self.greedy and rnd.random() < 0.35:
                if info.output_tools:
                    tool = info.output_tools[0]
                    parts: list[Any] = [ToolCallPart(tool.name, args_for(tool.parameters_json_schema))]
                else:
                    parts = [TextPart("done")]
            else:
                # the worker's callees, and tools it does not have (each name once: the model is
                # asked again, as often as the run's limits let it), never its other tools
                k = 6 if self.greedy else rnd.randint(1, 6)
                parts = [ToolCallPart(t.name, args_for(t.parameters_json_schema)) for t in (rnd.choice(callees) for _ in range(k - 1))] if callees else []
                self.unknown += 1
                parts.append(ToolCallPart(f"no_such_tool_{self.unknown}", {}))
            await asyncio.sleep(0)
            return ModelResponse(parts=parts, usage=usage, provider_details=details)

        return respond

    def _along_path(self, worker: str, info: Any) -> list[Any]:
        """`deep`: the next worker of the path (as a tool; else one of its other tools, the same one
        all run: the worker's Python calls the next, and a tool given arguments it cannot take may
        end the run), and a tool it does not have, so it is asked again."""
        from pydantic_ai import ToolCallPart

        self.unknown += 1
        parts = [ToolCallPart(f"no_such_tool_{self.unknown}", {})]
        if worker in self.path[:-1]:
            step = self.path[self.path.index(worker) + 1]
            tools = [t for t in info.function_tools if t.name == step]
            if not tools:
                others = sorted((t for t in info.function_tools if t.name not in self.costs.inputs.workers), key=lambda t: t.name)
                tools = [others[self.variant % len(others)]] if others else []
            parts += [ToolCallPart(t.name, args_for(t.parameters_json_schema)) for t in tools]
        return parts

    def _usage(self, model: str, in_max: int, out_max: int) -> tuple[Any, dict[str, str] | None]:
        from pydantic_ai.usage import RequestUsage

        rnd = self.rnd
        pick = (lambda top: top) if self.greedy else (lambda top: rnd.choice([top, rnd.randint(0, top), rnd.randint(0, max(top // 50, 1))]))
        tokens_in, tokens_out = pick(in_max), pick(out_max)
        kinds = [{}, {"cache_write_tokens": tokens_in, "cache_write_1h_tokens": tokens_in},
                 {"cache_read_tokens": tokens_in}, {"input_audio_tokens": tokens_in}]
        tiers = [None, {"service_tier": "priority"}, {"service_tier": "flex"}, {"processing": "batch"}]
        options = [(RequestUsage(input_tokens=tokens_in, output_tokens=tokens_out, **kind), tier) for kind in kinds for tier in tiers]
        if self.greedy:
            return _dearest(model, tokens_in, tokens_out)
        return rnd.choice(options)


@functools.cache
def _dearest(model: str, tokens_in: int, tokens_out: int) -> tuple[Any, dict[str, str] | None]:
    """The token kinds and service tier that make a request of these tokens dearest (greedy runs)."""
    from pydantic_ai.usage import RequestUsage

    kinds = [{}, {"cache_write_tokens": tokens_in, "cache_write_1h_tokens": tokens_in},
             {"cache_read_tokens": tokens_in}, {"input_audio_tokens": tokens_in}]
    tiers = [None, {"service_tier": "priority"}, {"service_tier": "flex"}, {"processing": "batch"}]
    options = [(RequestUsage(input_tokens=tokens_in, output_tokens=tokens_out, **kind), tier) for kind in kinds for tier in tiers]
    return max(options, key=lambda o: _price(model, *o))


def _price(model: str, usage: Any, tier: dict[str, str] | None) -> Decimal:
    from pydantic_ai import ModelResponse, TextPart

    from llm_do.pricing.actual import response_cost

    return response_cost(ModelResponse(parts=[TextPart("x")], usage=usage, provider_details=tier), model, GENERATED_MODELS) or Decimal(0)


async def one_run(bundle: Any, costs: Any, bound: Any, rnd: random.Random, mode: str, variant: int = 0) -> Decimal:
    """One fuzzed run; what its responses cost, as the run counted them."""
    from llm_do.runtime import Runtime, RuntimeConfig
    from llm_do.runtime.events import RequestPriced

    spent: list[Decimal] = []
    fuzz = Fuzzer(rnd, costs, mode, bound, variant)

    def priced(event: Any) -> None:
        if isinstance(event, RequestPriced):
            assert event.cost is not None, event
            spent.append(Decimal(event.cost))

    runtime = Runtime(bundle, RuntimeConfig(model_for=fuzz.model_for, on_event=priced, approval_mode="reject_all"))
    try:
        await runtime.run_async("go")
    except Exception:  # a limit stopped it (or a callee's input was refused): what it spent counts
        pass
    return sum(spent, Decimal(0))


def fuzz_project(name: str, lock: Path, runs: int, rnd: random.Random) -> dict[str, Any] | None:
    from llm_do.compiler.cost.bound import CostAnalysis
    from llm_do.compiler.cost.inputs import of_bundle
    from llm_do.runtime.bundle import load_bundle

    doc = json.loads(lock.read_bytes())
    costs = CostAnalysis(of_bundle(doc))
    entry = costs.entry_bound()
    bound = entry.usd
    if bound is None:
        return None
    bundle = load_bundle(lock)
    worst, above = Decimal(0), 0
    for i in range(runs):
        mode = {0: "deep", 1: "wide"}.get(i % 5, "random")
        cost = asyncio.run(one_run(bundle, costs, entry, rnd, mode, i // 5))
        worst = max(worst, cost)
        above += cost > bound
    return {"project": name, "runs": runs, "bound": bound, "worst": worst, "above": above}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10_000, help="fuzzed runs in all (default 10000)")
    parser.add_argument("--example-runs", type=int, default=100, help="runs of each example (default 100)")
    parser.add_argument("--generated", type=int, default=60, help="generated projects, which share the other runs (default 60)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / ".work" / "cost")
    args = parser.parse_args(argv)
    import logging
    import warnings

    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    from llm_do.compiler.cost.text import price_data_line
    from llm_do.pricing.money import usd

    rnd = random.Random(args.seed)
    projects: list[tuple[str, Path, bool]] = []
    for example in sorted(p for p in EXAMPLES.iterdir() if (p / "project.json").is_file() or list(p.glob("*.worker"))):
        copy = args.out / "examples" / example.name  # the runs' tools act on a copy
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(example, copy, ignore=shutil.ignore_patterns("bundle.lock", ".llm-do"))
        lock = compiled(copy, copy)
        if lock is not None:
            projects.append((example.name, lock, True))
    for k in range(args.generated):
        root = generated_project(args.out / "generated" / f"g{k:02d}", rnd)
        lock = compiled(root, root)
        if lock is not None:
            projects.append((f"generated g{k:02d}", lock, False))
    examples = sum(1 for _, _, example in projects if example)
    per_generated = max(1, (args.runs - examples * args.example_runs) // max(1, len(projects) - examples))
    started = time.perf_counter()
    rows, total, within, skipped = [], 0, 0, []
    for name, lock, example in projects:
        found = fuzz_project(name, lock, args.example_runs if example else per_generated, rnd)
        if found is None:
            skipped.append(name)
            continue
        found["example"] = example
        rows.append(found)
        total += found["runs"]
        within += found["runs"] - found["above"]
    elapsed = time.perf_counter() - started
    print(f"cost bench: {total} fuzzed runs of {len(rows)} projects in {elapsed:.1f} s, {total / elapsed:.1f} runs/s "
          f"({price_data_line()})")
    print(f"{'project':28} {'runs':>5} {'bound':>12} {'worst run':>12} {'bound/worst':>11} {'above':>5}")
    for r in rows:
        ratio = f"{r['bound'] / r['worst']:.2f}" if r["worst"] else "-"
        print(f"{r['project']:28} {r['runs']:>5} {usd(r['bound']):>12} {usd(r['worst']):>12} {ratio:>11} {r['above']:>5}")
    if skipped:
        print(f"not bounded, so not fuzzed: {', '.join(skipped)}")
    share = 100 * within / total if total else 0
    ratios = [r["bound"] / r["worst"] for r in rows if r["example"] and r["worst"]]
    print(f"within their bound: {within} of {total} runs ({share:.2f}%; goal 100%)")
    if ratios:
        print(f"examples: bound/worst at most {max(ratios):.2f} (goal within 2x)")
    return 0 if within == total else 1


if __name__ == "__main__":
    sys.exit(main())
