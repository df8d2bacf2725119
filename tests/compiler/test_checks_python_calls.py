"""G005 / L004: workers called from Python must be declared by the caller (red team L8, issue 15).

The build reads the Python tools a worker uses and the entry function with `ast`, so the same
calls are found with and without importing the Python."""

from __future__ import annotations

import pytest

from tests.support.cli import worker, write_project
from tests.support.lint import Lint, lint

TOOLS = """
from llm_do.runtime import CallContext, call_worker_async


def _relay(ctx, text):
    return ctx.deps.runtime.call_worker_async("ops", text)


async def deploy(ctx, text: str) -> str:
    \"\"\"Deploys through a helper of this module.\"\"\"
    return await _relay(ctx, text)


async def by_class(ctx, text: str) -> str:
    \"\"\"The method called on the class.\"\"\"
    return await CallContext.call_worker(ctx.deps, "ops", text)


async def by_api(ctx, text: str) -> str:
    \"\"\"The module-level function.\"\"\"
    return await call_worker_async(ctx, "ops", text)


async def by_handle(ctx, text: str) -> str:
    \"\"\"A handle.\"\"\"
    return await ctx.deps.worker("ghost").call_async(text)


async def declared(ctx, text: str) -> str:
    \"\"\"Calls only what main declares.\"\"\"
    await ctx.deps.call_agent("helper", text)
    return await ctx.deps.call_worker("aide", text)


async def computed(ctx, name: str) -> str:
    \"\"\"A computed name: left to the runtime.\"\"\"
    return await ctx.deps.call_worker(name, "x")


async def unused(ctx) -> str:
    \"\"\"No worker uses it: not checked.\"\"\"
    return await ctx.deps.call_worker("ops", "x")


TOOLS = [deploy, by_class, by_api, by_handle, declared, computed, unused]
"""

FLOW = """
async def main(ctx, data):
    first = await ctx.call_worker("helper", "x")
    return await ctx.runtime.call_worker_async("ops", first)
"""

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker", "*.agent"], "python_files": ["tools.py"],
                     "entry": {"worker": "main"}},
    "tools.py": TOOLS,
    "main.worker": worker("tools: [deploy, by_class, by_api, by_handle, declared, computed]\n"
                          "toolsets: [aide]\ncalls: [helper, old]"),
    "helper.worker": worker("description: Helps."),
    "aide.worker": worker("description: Aids."),
    "ops.worker": worker("description: Operates."),
    "old.agent": worker("tools: [deploy]"),
}

ENTRY = {
    "project.json": {"version": 1, "worker_files": ["*.worker"],
                     "entry": {"function": "flow.py:main", "calls": ["helper"]}},
    "flow.py": FLOW,
    "helper.worker": worker("description: Helps."),
    "ops.worker": worker("description: Operates."),
}


@pytest.fixture(scope="module", params=[(), ("--no-import",)], ids=["import", "no-import"])
def found(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Lint:
    return lint(write_project(tmp_path_factory.mktemp("calls"), PROJECT), *request.param)


def test_an_undeclared_call_through_a_helper_of_the_module_is_reported_at_the_call(found: Lint) -> None:
    d = found.expect("G005", "tools.py", 'ctx.deps.runtime.call_worker_async("ops"', mentions=("'deploy'",))
    assert d["message"] == "tool 'deploy' of worker 'main' calls worker 'ops', which 'main' does not declare"
    assert d["hint"] == "add 'ops' to `calls:` in the front matter of main.worker"


def test_every_spelling_of_a_call_is_found(found: Lint) -> None:
    found.expect("G005", "tools.py", 'CallContext.call_worker(ctx.deps, "ops"', mentions=("'by_class'",))
    found.expect("G005", "tools.py", 'call_worker_async(ctx, "ops"', mentions=("'by_api'",))
    d = found.expect("G005", "tools.py", 'ctx.deps.worker("ghost")', mentions=("'by_handle'",))
    assert "no worker of the project has that name" in d["message"]


def test_declared_calls_toolset_workers_and_computed_names_are_not_findings(found: Lint) -> None:
    reported = {d["message"].split("'")[1] for d in found.of("G005") + found.of("L004")}
    assert reported == {"deploy", "by_class", "by_api", "by_handle"}  # not declared, computed, unused


def test_an_agent_era_worker_gets_a_warning_with_the_migration_hint(found: Lint) -> None:
    d = found.expect("L004", "tools.py", 'ctx.deps.runtime.call_worker_async("ops"', mentions=("'old'",))
    assert d["hint"] == "add 'ops' to `calls:` in the front matter of old.agent (after `llm-do migrate`)"


@pytest.mark.parametrize("args", [(), ("--no-import",)], ids=["import", "no-import"])
def test_an_entry_function_calling_a_worker_entry_calls_lacks_is_reported(tmp_path, args: tuple[str, ...]) -> None:
    result = lint(write_project(tmp_path, ENTRY), *args)
    d = result.expect("G005", "flow.py", 'ctx.runtime.call_worker_async("ops"')
    assert d["message"] == "the entry function 'flow.py:main' calls worker 'ops', which entry.calls does not declare"
    assert d["hint"] == "add 'ops' to entry.calls in project.json"
    assert [x["code"] for x in result.diagnostics if x["severity"] == "error"] == ["G005"]


def test_a_tool_many_workers_list_is_read_once(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """main and old.agent both list `deploy`: its module is parsed for calls once, and each worker
    still gets its own finding (a module parsed per worker was half of a 3,000-worker build)."""
    from llm_do.compiler.pipeline import compile_project
    from llm_do.compiler.stages.check import python_calls

    read: list[str] = []
    real = python_calls.literal_calls

    def counted(source: str, name: str, line: int | None = None) -> list:
        read.append(name)
        return real(source, name, line)

    monkeypatch.setattr(python_calls, "literal_calls", counted)
    result = compile_project(write_project(tmp_path, PROJECT), import_python=False, emit_bundle=False, cache=False)
    assert sorted(read) == sorted(set(read)) and "deploy" in read
    deploy = [d for d in result.diagnostics if d.code in ("G005", "L004") and "'deploy'" in d.message]
    assert sorted(d.code for d in deploy) == ["G005", "L004"]
