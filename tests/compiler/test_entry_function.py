"""entry.function and `calls`: checked at build (N010, N011, N012, G004, S007), and seen by the call
graph, depth and reachability, `graph`, `capabilities` and `diff`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_cli, worker, write_project
from tests.support.lint import lint

FLOW = '''
from llm_do.runtime import CallContext, WorkerArgs


class Topic(WorkerArgs):
    topic: str

    def prompt_messages(self):
        return [self.topic]


async def main(ctx: CallContext, data: Topic) -> str:
    return await ctx.call_worker("writer", data.topic)


def too_many(a, b, c):
    return None


NOT_A_FUNCTION = 3
'''

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"],
                     "entry": {"function": "flow.py:main", "calls": ["writer", "reader"]}},
    "flow.py": FLOW,
    "writer.worker": worker("toolsets: [filesystem_project]\napprovals: [allow write_file]", "Write."),
    "reader.worker": worker("toolsets: [filesystem_project_ro]", "Read."),
}


def _with_entry(**entry) -> dict:
    return {**PROJECT, "project.json": {**PROJECT["project.json"], "entry": entry}}


@pytest.mark.process
def test_a_worker_and_a_function_as_entry_is_n010_at_the_worker(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", _with_entry(worker="writer", function="flow.py:main", calls=["writer"]))
    found = lint(root)
    found.expect("N010", "project.json", '"worker"', mentions=("never both",))
    assert found.exit_code == 1


def test_calls_without_a_function_is_n010(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {**_with_entry(worker="writer", calls=["reader"]),
                                          "writer.worker": worker("toolsets: [reader]", "Write.")})
    lint(root).expect("N010", "project.json", '"calls"', mentions=("without entry.function",))


@pytest.mark.parametrize("function, needle, words", [
    ("flow.py:mian", "\"flow.py:mian\"", ("defines no function 'mian'",)),
    ("flow.py:too_many", "\"flow.py:too_many\"", ("more than a context and an input",)),
    ("flow.py:NOT_A_FUNCTION", "\"flow.py:NOT_A_FUNCTION\"", ("not a function",)),
    ("flow.py:", "\"flow.py:\"", ("function name",)),
])
@pytest.mark.process
def test_an_entry_function_that_cannot_be_one_is_n011(tmp_path: Path, function: str, needle: str, words) -> None:
    root = write_project(tmp_path / "p", _with_entry(function=function, calls=["writer"]))
    d = lint(root).expect("N011", "project.json", needle, mentions=words)
    if function.endswith("mian"):
        assert "did you mean 'main'" in d["hint"]


def test_an_entry_function_in_a_missing_file_is_f001(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", _with_entry(function="flw.py:main", calls=["writer"]))
    lint(root).expect("F001", "project.json", "\"flw.py:main\"", mentions=("flw.py",))


@pytest.mark.process
def test_an_entry_function_whose_module_fails_to_import_is_y001_at_the_raising_line(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {**_with_entry(function="flow.py:main", calls=["writer", "reader"]),
                                          "flow.py": "import os\nraise RuntimeError('no config')\n"})
    found = lint(root)
    found.expect("Y001", "flow.py", line=2, mentions=("no config",))
    found.absent("N011")


@pytest.mark.process
def test_calls_naming_no_worker_is_n012_with_did_you_mean(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", _with_entry(function="flow.py:main", calls=["writer", "raeder"]))
    found = lint(root)
    found.expect("N012", "project.json", '"raeder"', suggests="reader")
    found.expect("G003", "reader.worker", line=1, column=1)  # not called, now that the name is wrong


@pytest.mark.process
def test_without_calls_a_warning_and_every_worker_is_reachable(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", _with_entry(function="flow.py:main"))
    found = lint(root)
    found.expect("G004", "project.json", '"flow.py:main"')
    found.absent("G003")
    assert found.exit_code == 0


@pytest.mark.process
def test_entry_args_are_validated_against_the_functions_input(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", _with_entry(function="flow.py:main", calls=["writer", "reader"],
                                                     args={"subject": "x"}))
    found = lint(root)
    assert found.exit_code == 1
    s007 = found.of("S007")
    assert any("entry.args: " in d["message"] or "topic" in d["message"] for d in s007), s007
    assert all("the entry function 'flow.py:main' takes Topic" in d["hint"] for d in s007)


@pytest.mark.process
def test_front_matter_calls_make_an_edge_and_end_g003(tmp_path: Path) -> None:
    files = {
        "project.json": {"version": 1, "worker_files": ["*.worker"]},
        "main.worker": worker("tools: [delegate]", "Lead."),
        "helper.worker": worker("toolsets: [filesystem_project_ro]", "Help."),
        "tools.py": """
            from pydantic_ai import RunContext


            async def delegate(ctx: RunContext, text: str) -> str:
                return await ctx.deps.call_worker("helper", text)


            TOOLS = [delegate]
            """,
    }
    files["project.json"]["python_files"] = ["tools.py"]
    root = write_project(tmp_path / "before", files)
    lint(root).expect("G003", "helper.worker", line=1, column=1)
    root = write_project(tmp_path / "after", {**files, "main.worker": worker("tools: [delegate]\ncalls: [helper]", "Lead.")})
    found = lint(root)
    found.absent("G003")
    assert run_cli("build", root).exit_code == 0
    assert json.loads((root / "bundle.lock").read_text())["workers"]["main"]["calls"] == ["helper"]
    edges = json.loads(run_cli("graph", root, "--format", "json").stdout)["edges"]
    assert [(e["from"], e["to"]) for e in edges if e["kind"] == "calls"] == [("worker:main", "worker:helper")]
    caps = json.loads(run_cli("capabilities", root, "--format", "json").stdout)["workers"][0]["capabilities"]
    assert ("fs.read:project/**", ["main", "helper"]) in [(c["capability"], c["path"]) for c in caps]
    typo = write_project(tmp_path / "typo", {**files, "main.worker": worker("tools: [delegate]\ncalls: [helpr]", "Lead.")})
    lint(typo).expect("N012", "main.worker", "helpr", suggests="helper")


@pytest.mark.process
def test_the_entry_function_runs_at_depth_0_so_its_callees_may_run_at_max_depth(tmp_path: Path) -> None:
    project = _with_entry(function="flow.py:main", calls=["writer"])
    project["project.json"]["runtime"] = {"max_depth": 2}
    project["writer.worker"] = worker("toolsets: [reader]", "Write.")
    found = lint(write_project(tmp_path / "ok", project))
    found.absent("G002")
    project["reader.worker"] = worker("toolsets: [writer]\nrecursive: true", "Read.")
    project["writer.worker"] = worker("toolsets: [reader]\nrecursive: true", "Write.")
    found = lint(write_project(tmp_path / "deep", project))
    found.expect("G002", "reader.worker", "writer", nth=1)  # writer at 1, reader at 2 = max_depth: its call is past it


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_project(tmp_path_factory.mktemp("entry_graph") / "proj", PROJECT)
    result = run_cli("build", root)
    assert result.exit_code == 0, result.stderr
    return root


@pytest.mark.parametrize("fmt", ["text", "json", "mermaid", "dot"])
@pytest.mark.process
def test_graph_shows_the_entry_function_and_its_calls(built: Path, fmt: str, snapshot) -> None:
    result = run_cli("graph", built / "bundle.lock", "--format", fmt)
    assert result.exit_code == 0, result.stderr
    assert "flow.py:main" in result.stdout
    assert result.stdout == snapshot


@pytest.mark.process
def test_graph_json_has_the_function_node_and_its_edges(built: Path) -> None:
    doc = json.loads(run_cli("graph", built, "--format", "json").stdout)
    assert doc["entry"] == "function:flow.py:main"
    [node] = [n for n in doc["nodes"] if n["id"] == "function:flow.py:main"]
    assert node["kind"] == "function"
    calls = {(e["from"], e["to"]) for e in doc["edges"] if e["kind"] == "calls"}
    assert calls == {("function:flow.py:main", "worker:writer"), ("function:flow.py:main", "worker:reader")}


@pytest.mark.process
def test_capabilities_list_the_entry_function_first_with_its_calls_and_what_they_reach(built: Path) -> None:
    result = run_cli("capabilities", built / "bundle.lock", "--format", "json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["entry"] == "flow.py:main"
    first = doc["workers"][0]
    assert first["name"] == "flow.py:main"
    caps = {c["capability"]: c["path"] for c in first["capabilities"]}
    assert caps["call:writer"] == ["flow.py:main"] and caps["call:reader"] == ["flow.py:main"]
    assert caps["fs.write:project/**"] == ["flow.py:main", "writer"]
    assert caps["fs.read:project/**"][0] == "flow.py:main"


@pytest.mark.process
def test_lint_warns_of_a_side_effect_the_entry_function_reaches_unapproved(built: Path) -> None:
    (r001,) = lint(built).of("R001")
    assert "flow.py:main -> writer -> write_file" in r001["message"]
    assert "to those of" not in r001["hint"]  # an entry function has no approvals to add a rule to


@pytest.mark.process
def test_diff_sees_a_call_added_to_entry_calls(tmp_path: Path, built: Path) -> None:
    before = write_project(tmp_path / "before", {  # the function called only the reader then
        **PROJECT, "flow.py": FLOW.replace('call_worker("writer"', 'call_worker("reader"'),
        "project.json": {**PROJECT["project.json"], "entry": {"function": "flow.py:main", "calls": ["reader"]}}})
    result = run_cli("diff", before, built / "bundle.lock", "--format", "json")
    assert result.exit_code == 1, result.stderr
    found = json.loads(result.stdout)["changes"]
    added = [c for c in found if c["area"] == "call"]
    assert [(c["verb"], c["subject"], c["severity"]) for c in added] == [("added", "call flow.py:main -> writer", "medium")]
    gained = [c for c in found if c["area"] == "capability" and c["subject"] == "fs.write:project/** of flow.py:main"]
    assert [(c["verb"], c["severity"]) for c in gained] == [("added", "high")]
    assert not [c for c in found if c["subject"] == "entry"]  # the calls are edges, not an entry change
