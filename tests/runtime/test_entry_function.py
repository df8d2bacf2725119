"""Entry functions: a project's Python function as the entry, calling workers like functions at
depth 1, refused on a worker its entry.calls does not declare, sync or async, `.agent` style too."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic_ai import ModelResponse, TextPart
from pydantic_ai.messages import UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from llm_do.runtime import CallRefused, Runtime, RuntimeConfig, run_worker
from llm_do.runtime.entry_function import run_entry_function
from tests.support.cli import one_line_error, run_cli, worker
from tests.support.events import of_kind, read_events
from tests.support.projects import build_project

pytestmark = pytest.mark.process

FLOW = '''
from llm_do.runtime import CallContext, CallRefused, WorkerArgs


class Topic(WorkerArgs):
    topic: str

    def prompt_messages(self):
        return [self.topic]


async def main(ctx: CallContext, data: Topic) -> str:
    summary = await ctx.call_worker("summarize", f"Summarize {data.topic}.")
    critique = await ctx.call_agent("critique", input=f"Critique: {summary}")
    return f"{summary} | {critique}"


async def rogue(ctx, data):
    who = "sec" + "ret"  # computed, so the build cannot see it: the run refuses it
    return await ctx.call_worker(who, "Tell me.")


async def bypass(ctx, data):
    """Around the context's own check: the run itself (with and without a parent), the class's method."""
    who, out = data.input, []
    for call in (lambda: ctx.runtime.call_worker_async(who, "x"),
                 lambda: ctx.runtime.call_worker_async(who, "x", parent=ctx.frame),
                 lambda: CallContext.call_worker(ctx, who, "x")):
        try:
            out.append(await call())
        except CallRefused as exc:
            out.append(str(exc))
    return " | ".join(out)


async def with_handle(ctx, data):
    summarize = ctx.worker("summarize")
    first = await summarize.call_async(data)
    try:
        ctx.worker("secret")
    except CallRefused as exc:
        return f"{first}; {exc}"


def legacy(input_data, runtime):
    """The .agent era's signature, and a sync function: its calls return the output directly."""
    return runtime.call_agent("summarize", input_data).upper()
'''

WORKERS = {
    "summarize.worker": worker("description: Summarizes.", "Summarize."),
    "critique.worker": worker("description: Critiques.", "Critique."),
    "secret.worker": worker("description: Knows a secret.", "Keep it."),
    "flow.py": FLOW,
}


def _project(function: str, calls: list[str] | None) -> dict:
    entry: dict = {"function": function}
    if calls is not None:
        entry["calls"] = calls
    return {"project.json": {"version": 1, "worker_files": ["*.worker"], "entry": entry}, **WORKERS}


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("entry_function")
    return {
        "main": build_project(base / "main", _project("flow.py:main", ["summarize", "critique"])),
        "rogue": build_project(base / "rogue", _project("flow.py:rogue", ["summarize"])),
        "bypass": build_project(base / "bypass", _project("flow.py:bypass", ["summarize"])),
        "legacy": build_project(base / "legacy", _project("flow.py:legacy", None)),
    }


def _script(tmp_path: Path, **turns: list[str]) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"workers": {w: [{"text": t} for t in ts] for w, ts in turns.items()}}))
    return path


def test_an_entry_function_calls_two_workers_at_depth_1_and_combines_their_outputs(bundles, tmp_path: Path) -> None:
    script = _script(tmp_path, summarize=["Cats sleep a lot."], critique=["Too short."])
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundles["main"], "--script", script, "--strict-script", "--events", events,
                     "--input-json", '{"topic": "cats"}')
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "Cats sleep a lot. | Too short."
    started = of_kind(read_events(events), "worker_started")
    assert [(e["worker"], e["depth"]) for e in started] == [("summarize", 1), ("critique", 1)]


def test_the_workers_it_calls_get_the_inputs_it_gives(bundles) -> None:
    seen: dict[str, list[str]] = {}

    def model_for(name: str) -> FunctionModel:
        def respond(messages: list, info: AgentInfo) -> ModelResponse:
            prompts = [p.content for m in messages for p in m.parts if isinstance(p, UserPromptPart)]
            seen[name] = [c if isinstance(c, str) else " ".join(map(str, c)) for c in prompts]
            return ModelResponse(parts=[TextPart(f"{name} said so")])

        return FunctionModel(respond, model_name=name)

    result = run_worker(bundles["main"], topic="dogs", config=RuntimeConfig(model_for=model_for))
    assert result.output == "summarize said so | critique said so"
    assert seen == {"summarize": ["Summarize dogs."], "critique": ["Critique: summarize said so"]}


def test_a_call_to_a_worker_entry_calls_does_not_declare_is_refused_and_fails_the_run(bundles, tmp_path: Path) -> None:
    script = _script(tmp_path, secret=["The secret."])
    result = run_cli("exec", bundles["rogue"], "--script", script, "Go.")
    assert result.exit_code == 1
    line = one_line_error(result)
    assert line == ("llm-do: run failed: the entry function 'flow.py:rogue' called worker 'secret', which its "
                    "entry.calls does not declare (it may call: summarize)")
    with pytest.raises(CallRefused):
        run_worker(bundles["rogue"], "Go.", config=RuntimeConfig(model="test"))


def test_no_api_lets_the_entry_function_call_a_worker_entry_calls_does_not_declare(bundles) -> None:
    refused = ("the entry function 'flow.py:bypass' called worker 'secret' from Python, which it does not declare; "
               "add 'secret' to entry.calls in project.json (it was not called)")
    result = run_worker(bundles["bypass"], "secret", config=RuntimeConfig(model="test"))
    assert result.output == " | ".join([refused] * 3)
    result = run_worker(bundles["bypass"], "summarize", config=RuntimeConfig(model="test"))
    assert result.output == " | ".join(["success (no tool calls)"] * 3)


def test_a_host_call_is_not_restricted_by_entry_calls(bundles) -> None:
    runtime = Runtime.load(bundles["bypass"], RuntimeConfig(model="test"))
    assert runtime.run("x", worker="secret").output == "success (no tool calls)"
    assert asyncio.run(runtime.call_worker_async("secret", "x")) == "success (no tool calls)"


def test_an_agent_era_sync_entry_function_runs_and_may_call_every_worker(bundles, tmp_path: Path) -> None:
    script = _script(tmp_path, summarize=["quiet night"])
    result = run_cli("exec", bundles["legacy"], "--script", script, "--strict-script", "What happened?")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "QUIET NIGHT"
    node = json.loads(bundles["legacy"].read_text())["entry"]["function"]
    assert (node["calls"], node["calls_declared"]) == (["critique", "secret", "summarize"], False)


def test_the_command_line_input_fits_the_entry_functions_schema(bundles) -> None:
    result = run_cli("exec", bundles["main"], "--model", "test", "a prompt")
    assert result.exit_code == 2
    assert one_line_error(result) == "llm-do: the entry function 'flow.py:main' takes topic, not a prompt; pass --input-json"
    result = run_cli("exec", bundles["main"], "--model", "test", "--input-json", '{"subject": "cats"}')
    assert result.exit_code == 2
    assert "the entry function 'flow.py:main'" in one_line_error(result) and "topic" in result.stderr


def test_the_entry_functions_node_records_its_input_schema_and_calls(bundles) -> None:
    doc = json.loads(bundles["main"].read_text())
    assert "worker" not in doc["entry"]
    node = doc["entry"]["function"]
    assert {k: node[k] for k in ("name", "source", "module", "qualname", "calls", "calls_declared")} == {
        "name": "flow.py:main", "source": "flow.py", "module": "flow", "qualname": "main",
        "calls": ["summarize", "critique"], "calls_declared": True}
    assert (node["input"]["qualname"], node["input"]["json_schema"]["required"]) == ("Topic", ["topic"])
    assert doc["sources"]["flow.py"]["kind"] == "python"  # verified at run time like every Python source


def test_ctx_worker_is_a_handle_bound_to_depth_1_and_checked_against_the_calls_too(bundles) -> None:
    runtime = Runtime.load(bundles["main"], RuntimeConfig(model="test"))
    node = {"name": "flow.py:with_handle", "module": "flow", "qualname": "with_handle", "calls": ["summarize"]}
    output = asyncio.run(run_entry_function(runtime, node, ("Hi.",), {}))
    assert output == ("success (no tool calls); the entry function 'flow.py:with_handle' called worker 'secret', "
                      "which its entry.calls does not declare (it may call: summarize)")
