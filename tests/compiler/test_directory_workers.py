"""Directory workers (`NAME/worker.worker`): named after their directory, with their own Python
and templates; the entry marked `entry: true`; Y007 for single-file workers using project Python."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_cli, worker, write_project
from tests.support.lint import ANY, lint

FORMATTER_TOOLS = """
from .helpers import bullet


def bullet_list(points: list[str]) -> str:
    \"\"\"Format points as a bulleted list.\"\"\"
    return "\\n".join(bullet(p) for p in points)


def count_words(text: str) -> int:
    \"\"\"Count words, as the formatter does.\"\"\"
    return len(text.split())


TOOLS = [bullet_list, count_words]
"""

ANALYZER_TOOLS = """
def count_words(text: str) -> int:
    \"\"\"Count words, as the analyzer does: one more than there are.\"\"\"
    return len(text.split()) + 1


TOOLS = [count_words]
"""

CONCEPT = {
    "main.worker": worker("model: test\ntoolsets:\n  - analyzer\n  - formatter", "Analyze, then format."),
    "workers/analyzer/worker.worker": worker("model: test\ntools:\n  - count_words", "Find the main points."),
    "workers/analyzer/tools.py": ANALYZER_TOOLS,
    "workers/formatter/worker.worker": worker("model: test\ntools:\n  - bullet_list\n  - count_words",
                                              '{% include "header.j2" %}'),
    "workers/formatter/tools.py": FORMATTER_TOOLS,
    "workers/formatter/helpers.py": 'def bullet(point: str) -> str:\n    return f"* {point}"\n',
    "workers/formatter/header.j2": "You format points as a report.\n",
    "templates/header.j2": "The shared header, which formatter does not take.\n",
}

SCRIPT = {"workers": {
    "main": [{"tool_calls": [{"tool": "analyzer", "args": {"input": "a b"}}]},
             {"tool_calls": [{"tool": "formatter", "args": {"input": "a"}}]},
             {"text": "done"}],
    "analyzer": [{"tool_calls": [{"tool": "count_words", "args": {"text": "a b"}}]}, {"text": "a"}],
    "formatter": [{"tool_calls": [{"tool": "bullet_list", "args": {"points": ["a", "b"]}},
                                  {"tool": "count_words", "args": {"text": "a b"}}]}, {"text": "* a"}],
}}


@pytest.mark.process
def test_the_concepts_layout_lints_clean_builds_and_runs_its_directory_workers_tools(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {**CONCEPT, "script.json": SCRIPT})
    assert lint(root).diagnostics == []
    assert run_cli("build", root).exit_code == 0
    bundle = json.loads((root / "bundle.lock").read_text(encoding="utf-8"))
    workers = bundle["workers"]
    assert set(workers) == {"main", "analyzer", "formatter"}
    # two tools named count_words, each its own worker's, from its own module
    assert workers["analyzer"]["tools"]["count_words"]["toolset"] == "workers.analyzer.tools.TOOLS"
    assert workers["formatter"]["tools"]["count_words"]["toolset"] == "workers.formatter.tools.TOOLS"
    assert workers["formatter"]["tools"]["bullet_list"]["approval"] == "ask"
    assert workers["formatter"]["instructions"] == "You format points as a report."
    assert {"workers/formatter/tools.py", "workers/formatter/helpers.py", "workers/analyzer/tools.py",
            "workers/formatter/header.j2"} <= set(bundle["sources"])
    assert "templates/header.j2" not in bundle["sources"]
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", root / "bundle.lock", "notes", "--script", root / "script.json", "--strict-script",
                     "--approve-all", "--events", events)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "done\n"
    returned = {(e["worker"], e["tool"]): e["result"] for e in map(json.loads, events.read_text().splitlines())
                if e["event"] == "tool_returned"}
    assert returned[("analyzer", "count_words")] == "3"  # analyzer's own count_words, not formatter's
    assert returned[("formatter", "count_words")] == "2"
    assert returned[("formatter", "bullet_list")] == "* a\n* b"
    graph = run_cli("graph", root / "bundle.lock", "--format", "json").json()
    assert {"id": "tool:analyzer:count_words", "kind": "tool"} in graph["nodes"]
    assert {"id": "tool:formatter:count_words", "kind": "tool"} in graph["nodes"]


@pytest.mark.process
def test_a_directory_workers_python_is_its_own_and_no_other_workers(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        **CONCEPT,
        "main.worker": worker("model: test\ntoolsets:\n  - analyzer\n  - formatter\ntools:\n  - bullet_list",
                              "Analyze, then format."),
    })
    found = lint(root)
    found.expect("N004", "main.worker", "bullet_list")
    assert found.codes() == ["N004"]


@pytest.mark.process
def test_a_tools_py_listed_in_python_files_is_the_projects(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        **CONCEPT,
        "project.json": {"version": 1, "worker_files": ["**/*.worker"], "python_files": ["workers/analyzer/tools.py"]},
        "main.worker": worker("model: test\ntoolsets:\n  - analyzer\n  - formatter", "Analyze, then format."),
        "workers/formatter/worker.worker": worker("model: test\ntools:\n  - bullet_list", "Format."),
        "workers/formatter/tools.py": FORMATTER_TOOLS.replace("TOOLS = [bullet_list, count_words]", "TOOLS = [bullet_list]"),
        "extra.worker": worker("model: test\ntools:\n  - count_words", "Count."),
    })
    found = lint(root)
    # extra (a single-file worker) may use the listed tools.py, and is told it is not portable
    assert sorted((d["code"], d["file"], d["severity"]) for d in found.diagnostics) == [
        ("G003", "extra.worker", "warning"), ("Y007", "extra.worker", "info")]
    assert "count_words" in found.of("Y007")[0]["message"]


@pytest.mark.process
def test_a_directory_tool_named_like_a_project_tool_is_n009(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        **CONCEPT,
        "project.json": {"version": 1, "worker_files": ["**/*.worker"], "python_files": ["shared.py"]},
        "shared.py": "def bullet_list(points: list[str]) -> str:\n    return ''\n\n\nTOOLS = [bullet_list]\n",
    })
    found = lint(root)
    found.expect("N009", "workers/formatter/tools.py", "def bullet_list", column=ANY, mentions=("bullet_list", "shared.py"))


def test_a_name_that_disagrees_with_the_directory_is_n013_at_the_key(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "main.worker": worker("model: test\ntoolsets:\n  - formatter", "Go."),
        "workers/formatter/worker.worker": worker("name: pretty\nmodel: test", "Format."),
    })
    found = lint(root)
    d = found.expect("N013", "workers/formatter/worker.worker", "name")
    assert "'formatter'" in d["message"] and "'pretty'" in d["message"]
    assert found.codes() == ["N013"], "checked as `formatter`: main's reference resolves"


def test_a_name_that_agrees_with_the_directory_and_worker_worker_at_the_root(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "main.worker": worker("model: test\ntoolsets:\n  - formatter\n  - worker", "Go."),
        "workers/formatter/worker.worker": worker("name: formatter\nmodel: test", "Format."),
        "worker.worker": worker("model: test", "A single-file worker named worker."),
    })
    assert lint(root).diagnostics == []


def test_two_directories_of_one_name_are_n001(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "main.worker": worker("model: test\ntoolsets:\n  - formatter", "Go."),
        "a/formatter/worker.worker": worker("model: test", "Format."),
        "b/formatter/worker.worker": worker("model: test", "Format too."),
    })
    lint(root).expect("N001", "b/formatter/worker.worker", line=1, column=1)


def test_worker_files_patterns_name_directory_workers_too(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "project.json": {"version": 1, "worker_files": ["main.worker", "workers/*/worker.worker"]},
        "main.worker": worker("model: test\ntoolsets:\n  - formatter", "Go."),
        "workers/formatter/worker.worker": worker("model: test", "Format."),
    })
    assert lint(root).diagnostics == []


def test_a_directory_name_that_is_no_worker_name_is_p007(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "main.worker": worker("model: test", "Go."),
        "workers/2fmt/worker.worker": worker("model: test", "Format."),
    })
    d = lint(root).expect("P007", "workers/2fmt/worker.worker", line=1, column=1)
    assert "directory" in d["message"]


# --- templates


def test_includes_search_the_workers_directory_then_the_root_then_templates(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "main.worker": worker("model: test\ntoolsets:\n  - formatter\n  - plain", '{% include "header.j2" %}'),
        "workers/formatter/worker.worker": worker(
            "model: test", '{% include "header.j2" %}\n{% include "root.j2" %}\n{% include "shared.j2" %}'),
        "workers/formatter/header.j2": 'formatter header; {% include "inner.j2" %}',
        "workers/formatter/inner.j2": "formatter inner",
        "header.j2": "root header",
        "root.j2": "root only",
        "templates/shared.j2": "shared only",
        "templates/root.j2": "not taken: the root comes first",
        "plain.worker": worker("model: test", '{% include "header.j2" %} / {% include "shared.j2" %}'),
    })
    assert run_cli("build", root).exit_code == 0
    workers = json.loads((root / "bundle.lock").read_text(encoding="utf-8"))["workers"]
    assert workers["formatter"]["instructions"] == "formatter header; formatter inner\nroot only\nshared only"
    assert workers["main"]["instructions"] == "root header"  # a single-file worker never sees formatter's
    assert workers["plain"]["instructions"] == "root header / shared only"


def test_an_include_found_nowhere_is_t003_with_the_search_order(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "main.worker": worker("model: test\ntoolsets:\n  - formatter", "Go."),
        "workers/formatter/worker.worker": worker("model: test", '{% include "missing.j2" %}'),
    })
    d = lint(root).expect("T003", "workers/formatter/worker.worker", "missing.j2")
    assert "templates/" in d["hint"] and "directory" in d["hint"]


def test_an_include_leading_out_of_the_root_is_t004(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "main.worker": worker("model: test\ntoolsets:\n  - formatter", "Go."),
        "workers/formatter/worker.worker": worker("model: test", '{% include "../../../x.j2" %}'),
    })
    lint(root).expect("T004", "workers/formatter/worker.worker", "../../../x.j2")


# --- the entry marked in front matter


def test_a_folder_whose_only_worker_says_entry_true_is_a_project(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {"hello.worker": worker("entry: true\nmodel: test", "Say hello.")})
    assert lint(root).diagnostics == []
    result = run_cli("run", root, "--model", "test", "Hi")
    assert result.exit_code == 0, result.stderr


def test_two_workers_marked_entry_are_n014_naming_both(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "a.worker": worker("entry: true\nmodel: test\ntoolsets:\n  - b", "A."),
        "b.worker": worker("entry: true\nmodel: test", "B."),
    })
    found = lint(root)
    line, column = found.at("a.worker", "entry")
    found.expect("N014", "b.worker", "entry", related=("a.worker", line, column))
    assert found.codes() == ["N014"]


def test_a_mark_beside_main_worker_is_n014(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "main.worker": worker("model: test\ntoolsets:\n  - other", "Main."),
        "other.worker": worker("entry: true\nmodel: test", "Other."),
    })
    lint(root).expect("N014", "other.worker", "entry", related=("main.worker", 1, 1))


def test_a_mark_beside_a_project_json_entry_naming_another_worker_is_n014(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "first"}},
        "first.worker": worker("model: test\ntoolsets:\n  - second", "First."),
        "second.worker": worker("entry: true\nmodel: test", "Second."),
    })
    found = lint(root)
    line, column = position_of(root / "project.json", '"first"')
    found.expect("N014", "second.worker", "entry", related=("project.json", line, column))


def test_a_mark_agreeing_with_project_json_or_naming_the_entry_it_lacks(tmp_path: Path) -> None:
    agree = write_project(tmp_path / "a", {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "first"}},
        "first.worker": worker("entry: true\nmodel: test", "First."),
    })
    assert lint(agree).diagnostics == []
    lacking = write_project(tmp_path / "b", {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"args": {"input": "hi"}}},
        "first.worker": worker("entry: true\nmodel: test", "First."),
    })
    assert lint(lacking).diagnostics == []
    assert run_cli("build", lacking).exit_code == 0
    assert json.loads((lacking / "bundle.lock").read_text(encoding="utf-8"))["entry"]["worker"] == "first"


def test_a_folder_of_workers_without_main_or_mark_is_no_project(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {"a.worker": worker("model: test", "A."), "b.worker": worker("entry: false", "B.")})
    result = run_cli("lint", root)
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert "no project.json, no main.worker and no worker marked `entry: true`" in result.stderr
    assert run_cli("lint", write_project(tmp_path / "empty", {"notes.md": "no workers"})).exit_code == 2


def test_a_mark_in_a_worker_that_fails_to_parse_is_reported_once(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {"2fast.worker": worker("entry: true\nmodel: test", "A.")})
    found = lint(root)
    found.expect("P007", "2fast.worker", line=1, column=1)
    assert found.codes() == ["P007"], "no second error for the entry the file would have been"


def position_of(path: Path, needle: str) -> tuple[int, int]:
    text = path.read_text(encoding="utf-8")
    start = text.index(needle)
    return text.count("\n", 0, start) + 1, start - (text.rfind("\n", 0, start) + 1) + 1


# --- portability


@pytest.mark.process
def test_y007_lists_single_file_workers_using_project_python_as_info(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "project.json": {"version": 1, "worker_files": ["**/*.worker"], "python_files": ["tools.py"]},
        "tools.py": "def shout(text: str) -> str:\n    return text.upper()\n\n\nTOOLS = [shout]\n",
        "main.worker": worker("model: test\ntools:\n  - shout\ntoolsets:\n  - formatter", "Shout."),
        "workers/formatter/worker.worker": worker("model: test\ntools:\n  - shout", "Format."),
    })
    found = lint(root)
    assert found.exit_code == 0
    (d,) = found.diagnostics
    assert (d["code"], d["severity"], d["file"], d["line"]) == ("Y007", "info", "main.worker", 1)
    assert "'main'" in d["message"] and "shout" in d["message"] and "directory worker" in d["hint"]
    suppressed = write_project(tmp_path / "p", {
        "project.json": {"version": 1, "worker_files": ["**/*.worker"], "python_files": ["tools.py"], "suppress": ["Y007"]}})
    assert lint(suppressed).diagnostics == []


def _toolset_module(result: str) -> str:
    return f"""
from pydantic_ai import FunctionToolset


def lookup(key: str) -> str:
    \"\"\"Look a key up.\"\"\"
    return "{result}"


TOOLSETS = {{"helpers": FunctionToolset([lookup])}}
"""


@pytest.mark.process
def test_two_directory_workers_may_each_have_a_toolset_of_one_name(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "main.worker": worker("model: test\ntoolsets:\n  - left\n  - right", "Go."),
        "left/worker.worker": worker("model: test\ntoolsets:\n  - helpers\napprovals:\n  - ask helpers", "Left."),
        "left/tools.py": _toolset_module("from left"),
        "right/worker.worker": worker("model: test\ntoolsets:\n  - helpers", "Right."),
        "right/tools.py": _toolset_module("from right"),
        "script.json": {"workers": {
            "main": [{"tool_calls": [{"tool": "left", "args": {"input": "x"}}, {"tool": "right", "args": {"input": "x"}}]},
                     {"text": "done"}],
            "left": [{"tool_calls": [{"tool": "lookup", "args": {"key": "k"}}]}, {"text": "l"}],
            "right": [{"tool_calls": [{"tool": "lookup", "args": {"key": "k"}}]}, {"text": "r"}],
        }},
    })
    assert lint(root).diagnostics == []
    assert lint(root, "--no-import").codes() == ["Y006"]
    assert run_cli("build", root).exit_code == 0
    bundle = json.loads((root / "bundle.lock").read_text(encoding="utf-8"))
    assert {k: (v["module"], v["key"]) for k, v in bundle["toolsets"].items()} == {
        "left.tools.helpers": ("left.tools", "helpers"), "right.tools.helpers": ("right.tools", "helpers")}
    assert bundle["workers"]["left"]["tools"]["lookup"] == {"toolset": "left.tools.helpers", "approval": "ask"}
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", root / "bundle.lock", "go", "--script", root / "script.json", "--strict-script",
                     "--approve-all", "--events", events)
    assert result.exit_code == 0, result.stderr
    returned = {e["worker"]: e["result"] for e in map(json.loads, events.read_text().splitlines())
                if e["event"] == "tool_returned" and e["tool"] == "lookup"}
    assert returned == {"left": "from left", "right": "from right"}


@pytest.mark.process
def test_an_opaque_toolset_of_a_directory_worker_warns_and_its_rules_target_it_by_name(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "main.worker": worker("model: test\ntoolsets:\n  - left", "Go."),
        "left/worker.worker": worker("model: test\ntoolsets:\n  - helpers\napprovals:\n  - deny helpers", "Left."),
        "left/tools.py": "from pydantic_ai import FunctionToolset\n\n\ndef helpers():\n    return FunctionToolset([])\n\n\n"
                         "TOOLSETS = {'helpers': helpers}\n",
    })
    found = lint(root)
    found.expect("Y003", "left/tools.py", "def helpers", column=ANY)
    assert found.codes() == ["Y003"]
    assert run_cli("build", root).exit_code == 0
    node = json.loads((root / "bundle.lock").read_text(encoding="utf-8"))["workers"]["left"]
    assert node["toolsets"] == [{"toolset": "left.tools.helpers", "settings": {}, "opaque_approval": "deny"}]


@pytest.mark.process
def test_a_directory_workers_tool_calling_an_undeclared_worker_is_g005(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {
        "main.worker": worker("model: test\ntoolsets:\n  - left\n  - helper", "Go."),
        "helper.worker": worker("model: test", "Help."),
        "left/worker.worker": worker("model: test\ntools:\n  - ask_helper", "Left."),
        "left/tools.py": "from pydantic_ai import RunContext\n\n\nasync def ask_helper(ctx: RunContext, q: str) -> str:\n"
                         "    \"\"\"Ask the helper.\"\"\"\n    return await ctx.deps.call_worker(\"helper\", q)\n\n\n"
                         "TOOLS = [ask_helper]\n",
    })
    found = lint(root)
    found.expect("G005", "left/tools.py", "ctx.deps.call_worker", mentions=("'left'", "'helper'"))
